import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { z } from "zod";
import { InvalidEvent, type NewEvent } from "./port.ts";
import { type EventRow, openDatabase } from "./schema.ts";
import { openSqliteEventStore } from "./sqlite.ts";

/** Input of {@link benchAppends}. */
export interface BenchAppendsOptions {
  /** Total events to append (>= 1). */
  events: number;
  /** Events per append call / per raw transaction (>= 1). */
  batch: number;
  /** Directory for the temporary database files (a subdirectory is created and removed). */
  dir: string;
}

/** Output of {@link benchAppends}. Rates are events per second of wall time. */
export interface BenchAppendsResult {
  /** Through `EventStore.append` (validation, expected-revision check, hashing, JSON) into one stream. */
  eventsPerSec: number;
  /** Baseline: raw better-sqlite3 INSERTs of the very same rows, one BEGIN IMMEDIATE transaction per batch. */
  rawInsertsPerSec: number;
  /** eventsPerSec / rawInsertsPerSec (1 = no overhead over raw SQLite). */
  ratio: number;
  events: number;
  batch: number;
  /** Wall time of each phase, in ms. */
  storeMs: number;
  rawMs: number;
}

const optionsSchema = z.object({
  events: z.number().int().min(1),
  batch: z.number().int().min(1),
  dir: z.string().min(1),
});

/** A payload shaped like an ActionSubmitted event (~400 bytes of JSON). */
export function sampleEvent(n: number): NewEvent {
  return {
    type: "ActionSubmitted",
    data: {
      actionId: `a-${n}`,
      localId: `~${n}`,
      binding: "REPO",
      title: `Create issue #${n}`,
      description: `Create an issue titled "Bench ${n}" in acme/widgets with a body of moderate length.`,
      delivery: "simulate",
      dependsOn: n > 0 ? [`~${n - 1}`] : [],
      actionKind: { tag: "issue.create", label: "Create issue" },
    },
    metadata: { actor: "agent", caller: { kind: "agent", id: "chat-bench" }, correlationId: "bench" },
  };
}

/**
 * Measures append throughput of the SQLite event store next to a baseline measured in the same run
 * (STYLE.md "Benchmarks"): first `events` events are appended through the store in batches of `batch`
 * (each append with the exact expected revision), then the rows it stored are INSERTed raw into a fresh
 * file with the same schema and pragmas, one transaction per batch. Files are deleted afterwards.
 * @throws InvalidEvent when an option is missing or not a positive integer.
 */
export async function benchAppends(options: BenchAppendsOptions): Promise<BenchAppendsResult> {
  const parsed = optionsSchema.safeParse(options);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw new InvalidEvent(`benchAppends options.${issue?.path.join(".")}: ${issue?.message}`);
  }
  const { events, batch } = parsed.data;
  const work = mkdtempSync(join(parsed.data.dir, "gatehouse-bench-"));
  try {
    const batches: NewEvent[][] = [];
    for (let n = 0; n < events; n += batch) {
      batches.push(Array.from({ length: Math.min(batch, events - n) }, (_, i) => sampleEvent(n + i)));
    }

    const storePath = join(work, "store.db");
    const store = openSqliteEventStore(storePath);
    let expected = -1;
    const storeStart = performance.now();
    for (const events of batches) {
      expected = (await store.append("workspace-bench", events, expected)).nextExpectedRevision;
    }
    const storeMs = performance.now() - storeStart;
    await store.close();

    const source = openDatabase(storePath, { busyTimeoutMs: 5000 });
    const rows = source.prepare<[], EventRow>("SELECT * FROM events ORDER BY global_position").all();
    source.close();
    const raw = openDatabase(join(work, "raw.db"), { busyTimeoutMs: 5000 });
    const insert = raw.prepare<[string, number, string, string, string]>(
      "INSERT INTO events (stream_id, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?)",
    );
    const insertBatch = raw.transaction((chunk: EventRow[]) => {
      for (const r of chunk) insert.run(r.stream_id, r.revision, r.type, r.data, r.metadata);
    });
    const rawStart = performance.now();
    for (let i = 0; i < rows.length; i += batch) insertBatch.immediate(rows.slice(i, i + batch));
    const rawMs = performance.now() - rawStart;
    raw.close();

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
    rmSync(work, { recursive: true, force: true });
  }
}
