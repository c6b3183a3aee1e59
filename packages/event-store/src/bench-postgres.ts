import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import pg from "pg";
import { sampleEvent } from "./bench.ts";
import type { NewEvent } from "./port.ts";
import { openPostgresEventStore } from "./postgres.ts";

/** Output of {@link benchPostgresAppends}. Rates are events per second of wall time. */
export interface BenchPostgresResult {
  /** Through `EventStore.append` (validation, head lock, retry lookup, hashing, NOTIFY) into one stream. */
  eventsPerSec: number;
  /** Baseline: the same rows INSERTed raw with `pg`, one transaction per batch, into a table of the same shape. */
  rawInsertsPerSec: number;
  /** eventsPerSec / rawInsertsPerSec. */
  ratio: number;
  events: number;
  batch: number;
  storeMs: number;
  rawMs: number;
}

/**
 * Measures PostgreSQL append throughput next to the raw driver in the same run, on a migrated database
 * at `url`. The raw phase inserts the rows the store wrote into a copy of the table
 * (`CREATE TABLE … (LIKE gatehouse_events INCLUDING ALL)`), dropped afterwards.
 */
export async function benchPostgresAppends(
  url: string,
  events: number,
  batch: number,
): Promise<BenchPostgresResult> {
  const stream = `workspace-bench-${randomUUID()}`;
  const batches: NewEvent[][] = [];
  for (let n = 0; n < events; n += batch)
    batches.push(Array.from({ length: Math.min(batch, events - n) }, (_, i) => sampleEvent(n + i)));
  const store = await openPostgresEventStore(url);
  let expected = -1;
  const storeStart = performance.now();
  try {
    for (const chunk of batches)
      expected = (await store.append(stream, chunk, expected)).nextExpectedRevision;
  } finally {
    await store.close();
  }
  const storeMs = performance.now() - storeStart;

  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const table = `bench_raw_${randomUUID().replaceAll("-", "")}`;
  try {
    const rows = (
      await client.query(
        "SELECT global_position, stream_id, revision, event_id, type, data, metadata FROM gatehouse_events WHERE stream_id = $1 ORDER BY revision",
        [stream],
      )
    ).rows;
    await client.query(`CREATE TABLE ${table} (LIKE gatehouse_events INCLUDING ALL)`);
    const rawStart = performance.now();
    for (let i = 0; i < rows.length; i += batch) {
      const chunk = rows.slice(i, i + batch);
      await client.query("BEGIN");
      await client.query(
        `INSERT INTO ${table} (global_position, stream_id, revision, event_id, type, data, metadata)
         SELECT * FROM unnest($1::int8[], $2::text[], $3::int8[], $4::text[], $5::text[], $6::text[], $7::text[])`,
        [
          chunk.map((r) => r.global_position),
          chunk.map((r) => r.stream_id),
          chunk.map((r) => r.revision),
          chunk.map((r) => r.event_id),
          chunk.map((r) => r.type),
          chunk.map((r) => r.data),
          chunk.map((r) => r.metadata),
        ],
      );
      await client.query("COMMIT");
    }
    const rawMs = performance.now() - rawStart;
    const eventsPerSec = events / (storeMs / 1000);
    const rawInsertsPerSec = rows.length / (rawMs / 1000);
    return {
      eventsPerSec,
      rawInsertsPerSec,
      ratio: eventsPerSec / rawInsertsPerSec,
      events,
      batch,
      storeMs,
      rawMs,
    };
  } finally {
    await client.query(`DROP TABLE IF EXISTS ${table}`).catch(() => {});
    await client.end();
  }
}
