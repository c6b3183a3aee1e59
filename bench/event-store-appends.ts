import { mkdtempSync, rmSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { InvalidEvent, type NewEvent, openSqliteEventStore } from "@gatehouse/event-store";
import { type EventRow, openDatabase } from "@gatehouse/event-store/sqlite-schema";
import { z } from "zod";

/** Input of {@link benchAppends}. */
export interface BenchAppendsOptions {
  /** Total events to append (>= 1). */
  events: number;
  /** Events per append call / per raw transaction (>= 1). */
  batch: number;
  /** Directory for the temporary database files (a subdirectory is created and removed). */
  dir: string;
  /**
   * Rounds the batches are split into (>= 1, default 5): each round times the store's appends, then the
   * raw inserts of the rows they stored, so a change in machine load hits both sides alike.
   */
  rounds?: number;
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
  rounds: number;
  /** Wall time of each phase summed over the rounds, in ms. */
  storeMs: number;
  rawMs: number;
}

const optionsSchema = z.object({
  events: z.number().int().min(1),
  batch: z.number().int().min(1),
  dir: z.string().min(1),
  rounds: z.number().int().min(1).default(5),
});

/** Splits `events` sample events into batches of `batch`, and the batches into `rounds` consecutive groups. */
export function benchRounds(events: number, batch: number, rounds: number): NewEvent[][][] {
  const batches: NewEvent[][] = [];
  for (let n = 0; n < events; n += batch) {
    batches.push(Array.from({ length: Math.min(batch, events - n) }, (_, i) => sampleEvent(n + i)));
  }
  const per = Math.ceil(batches.length / Math.min(rounds, batches.length));
  const out: NewEvent[][][] = [];
  for (let i = 0; i < batches.length; i += per) out.push(batches.slice(i, i + per));
  return out;
}

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
 * (docs/benchmarks.md): `events` events are appended through the store in batches of `batch` (each
 * append with the exact expected revision), and the rows it stored are INSERTed raw into a fresh file
 * with the same schema and pragmas, one transaction per batch — in `rounds` alternating rounds (store
 * round k, then raw round k), after an untimed warm-up of up to 3 batches on each side (another stream).
 * Files are deleted afterwards.
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
    const rounds = benchRounds(events, batch, parsed.data.rounds);
    const storePath = join(work, "store.db");
    const store = openSqliteEventStore(storePath);
    const source = openDatabase(storePath, { busyTimeoutMs: 5000 });
    const raw = openDatabase(join(work, "raw.db"), { busyTimeoutMs: 5000 });
    const select = source.prepare<[number], EventRow>(
      "SELECT * FROM events WHERE global_position > ? ORDER BY global_position",
    );
    const insert = raw.prepare<[string, number, string, string, string]>(
      "INSERT INTO events (stream_id, revision, type, data, metadata) VALUES (?, ?, ?, ?, ?)",
    );
    const insertBatch = raw.transaction((chunk: EventRow[]) => {
      for (const r of chunk) insert.run(r.stream_id, r.revision, r.type, r.data, r.metadata);
    });
    let expected = -1;
    let storeMs = 0;
    let rawMs = 0;
    let rawRows = 0;
    let copied = 0;
    try {
      // Warm-up, not timed: a few appends to another stream and their raw inserts (JIT, page cache).
      let warm = -1;
      for (const chunk of benchRounds(Math.min(events, 3 * batch), batch, 1)[0] ?? [])
        warm = (await store.append("workspace-warmup", chunk, warm)).nextExpectedRevision;
      const warmRows = select.all(0);
      for (let i = 0; i < warmRows.length; i += batch) insertBatch.immediate(warmRows.slice(i, i + batch));
      copied = warmRows[warmRows.length - 1]?.global_position ?? 0;
      for (const round of rounds) {
        const storeStart = performance.now();
        for (const chunk of round) {
          expected = (await store.append("workspace-bench", chunk, expected)).nextExpectedRevision;
        }
        storeMs += performance.now() - storeStart;
        const rows = select.all(copied);
        copied = rows[rows.length - 1]?.global_position ?? copied;
        rawRows += rows.length;
        const rawStart = performance.now();
        for (let i = 0; i < rows.length; i += batch) insertBatch.immediate(rows.slice(i, i + batch));
        rawMs += performance.now() - rawStart;
      }
    } finally {
      source.close();
      raw.close();
      await store.close();
    }

    const eventsPerSec = events / (storeMs / 1000);
    const rawInsertsPerSec = rawRows / (rawMs / 1000);
    return {
      eventsPerSec,
      rawInsertsPerSec,
      ratio: eventsPerSec / rawInsertsPerSec,
      events,
      batch,
      rounds: rounds.length,
      storeMs,
      rawMs,
    };
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
