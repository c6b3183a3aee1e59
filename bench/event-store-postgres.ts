import { randomUUID } from "node:crypto";
import { performance } from "node:perf_hooks";
import { InvalidEvent, openPostgresEventStore } from "@gatehouse/event-store";
import pg from "pg";
import { benchRounds } from "./event-store-appends.ts";

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
  rounds: number;
  /** Wall time of each phase summed over the rounds, in ms. */
  storeMs: number;
  rawMs: number;
}

/**
 * Measures PostgreSQL append throughput next to the raw driver in the same run, on a migrated database
 * at `url`: `events` events appended through the store into a new stream in batches of `batch` (exact
 * expected revisions), and the rows it stored (hash chain included) INSERTed raw — BEGIN, one
 * multi-row INSERT, COMMIT per batch — into a copy of the table
 * (`CREATE TABLE … (LIKE gatehouse_events INCLUDING ALL)`, dropped afterwards). The batches are split
 * into `rounds` (default 5) alternating rounds, store round k then raw round k, so a change in
 * machine load hits both sides alike, after an untimed warm-up of up to 3 batches on each side.
 * @throws InvalidEvent when a count is not a positive integer; the driver's error when the server fails.
 */
export async function benchPostgresAppends(
  url: string,
  events: number,
  batch: number,
  rounds = 5,
): Promise<BenchPostgresResult> {
  for (const [name, n] of [
    ["events", events],
    ["batch", batch],
    ["rounds", rounds],
  ] as const)
    if (!Number.isSafeInteger(n) || n < 1)
      throw new InvalidEvent(`benchPostgresAppends ${name} must be a positive integer (got ${n})`);
  const stream = `workspace-bench-${randomUUID()}`;
  const groups = benchRounds(events, batch, rounds);
  const store = await openPostgresEventStore(url);
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  const table = `bench_raw_${randomUUID().replaceAll("-", "")}`;
  try {
    await client.query(`CREATE TABLE ${table} (LIKE gatehouse_events INCLUDING ALL)`);
    const rawInsert = async (rows: pg.QueryResultRow[]) => {
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
    };
    const streamRows = async (streamId: string, from: number) =>
      (
        await client.query(
          "SELECT global_position, stream_id, revision, event_id, type, data, metadata FROM gatehouse_events WHERE stream_id = $1 AND revision >= $2 ORDER BY revision",
          [streamId, from],
        )
      ).rows;
    // Warm-up, not timed: a few appends to another stream and their raw inserts (JIT, pool, plans).
    const warmStream = `${stream}-warmup`;
    let warm = -1;
    for (const chunk of benchRounds(Math.min(events, 3 * batch), batch, 1)[0] ?? [])
      warm = (await store.append(warmStream, chunk, warm)).nextExpectedRevision;
    await rawInsert(await streamRows(warmStream, 0));
    let expected = -1;
    let storeMs = 0;
    let rawMs = 0;
    let rawRows = 0;
    for (const group of groups) {
      const from = expected + 1;
      const storeStart = performance.now();
      for (const chunk of group)
        expected = (await store.append(stream, chunk, expected)).nextExpectedRevision;
      storeMs += performance.now() - storeStart;

      const rows = await streamRows(stream, from);
      rawRows += rows.length;
      const rawStart = performance.now();
      await rawInsert(rows);
      rawMs += performance.now() - rawStart;
    }
    const eventsPerSec = events / (storeMs / 1000);
    const rawInsertsPerSec = rawRows / (rawMs / 1000);
    return {
      eventsPerSec,
      rawInsertsPerSec,
      ratio: eventsPerSec / rawInsertsPerSec,
      events,
      batch,
      rounds: groups.length,
      storeMs,
      rawMs,
    };
  } finally {
    await client.query(`DROP TABLE IF EXISTS ${table}`).catch(() => {});
    await client.end();
    await store.close();
  }
}
