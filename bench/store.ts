/**
 * `npm run bench:store` (also section 3 of `npm run bench`): the event store (issue 16, "Measure").
 *
 *  - Appends/s at batch 1, 10 and 100 per backend, each next to the raw driver doing the same
 *    inserts in the same run: embedded SQLite vs better-sqlite3 (`benchAppends`), PostgreSQL vs `pg`
 *    (`benchPostgresAppends`). The raw side inserts the very rows the store wrote, hash chain included,
 *    one transaction per batch. Goal: >= 50% of raw.
 *  - Replay events/s per backend: `WorkspaceStreams.replay` (read the whole workspace stream, fold it
 *    with approval-core's `evolve`: what the approval service's Replay does before rendering the
 *    LogView) vs the raw driver reading the same rows and JSON.parse-ing `data` and `metadata`.
 *    Goal: >= 100k events/s on the embedded store.
 *
 * PostgreSQL is a real server started on 127.0.0.1 in a fresh data directory (`startPostgresServer`,
 * default settings: fsync and synchronous_commit on) and removed afterwards; when it is not installed
 * the PostgreSQL rows are left out with a note.
 *
 * Env overrides (positive integers unless noted):
 *   BENCH_APPEND_EVENTS       events per batch size and backend in the append bench (default 3000)
 *   BENCH_REPLAY_EVENTS       events in the replayed workspace stream (default 20000)
 *   BENCH_REPLAY_REPS         timed replays per side and backend, after one warm-up each (default 5)
 *   BENCH_STORE_POSTGRES      "0" leaves PostgreSQL out (default: measured when installed)
 * Run alone, it prints its table and writes bench-results/store.json.
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { encodeEventData, type PlannedEvent, planned, WorkspaceStreams } from "@gatehouse/approval-core";
import {
  type EventStore,
  type NewEvent,
  openPostgresEventStore,
  openSqliteEventStore,
} from "@gatehouse/event-store";
import {
  type PostgresServer,
  postgresBinDir,
  startPostgresServer,
} from "@gatehouse/event-store/postgres-server";
import {
  ActionStatus,
  ActionSubmitted,
  Delivery,
  ObservationRecorded,
  ResourceIntroduced,
} from "@gatehouse/proto";
import Database from "better-sqlite3";
import pg from "pg";
import { benchAppends } from "./event-store-appends.ts";
import { benchPostgresAppends } from "./event-store-postgres.ts";
import { envInt, envStr, log, median, printTable, type Row, round } from "./support.ts";

const ROOT = resolve(fileURLToPath(import.meta.url), "../..");

/** Options of {@link storeBench}; counts are events, `dir` holds the temporary SQLite files. */
export interface StoreBenchOptions {
  /** Events per batch size and backend in the append bench (>= 1). */
  appendEvents: number;
  /** Events in the replayed workspace stream (>= 2). */
  replayEvents: number;
  /** Timed replays per side and backend (>= 1), after one warm-up each. */
  replayReps: number;
  /** Directory for temporary files (subdirectories are created and removed). */
  dir: string;
  /** Measure PostgreSQL too (a server is started on loopback). */
  postgres: boolean;
}

/** The options from the environment (see the file comment), with `dir` given. */
export function storeBenchOptionsFromEnv(dir: string): StoreBenchOptions {
  return {
    appendEvents: envInt("BENCH_APPEND_EVENTS", 3000),
    replayEvents: Math.max(2, envInt("BENCH_REPLAY_EVENTS", 20_000)),
    replayReps: envInt("BENCH_REPLAY_REPS", 5),
    dir,
    postgres: envStr("BENCH_STORE_POSTGRES", "1") !== "0",
  };
}

/** One replay measurement: medians of the timed repetitions, rates in events per second. */
export interface ReplayFigures {
  events: number;
  reps: number;
  /** Through WorkspaceStreams.replay (readStream + evolve). */
  storeMs: number[];
  /** Raw driver SELECT of the same rows + JSON.parse of data and metadata. */
  rawMs: number[];
  storeEventsPerSec: number;
  rawEventsPerSec: number;
}

const BATCH_SIZES = [1, 10, 100] as const;

/**
 * A workspace stream shaped like real use: WorkspaceCreated, ResourceIntroduced, then rounds of
 * ObservationRecorded, ActionSubmitted, ActionApproved, ActionApplying, ActionApplied (ts-proto JSON
 * as the approval service stores it), cut to exactly `count` events.
 */
export function workspaceEvents(workspaceId: string, count: number): NewEvent[] {
  const out: PlannedEvent[] = [
    planned("WorkspaceCreated", { workspaceId, name: "bench", owner: "user:bench" }, "user:bench"),
    planned(
      "ResourceIntroduced",
      ResourceIntroduced.fromPartial({
        binding: "MEMORY",
        url: "mcp://memory",
        gatekeeper: "mcp",
        trust: "trusted",
        methods: ["read_graph", "create_entities"],
      }),
      "service:kernel",
    ),
  ];
  for (let n = 0; out.length < count; n++) {
    const actionId = out.length + 1;
    out.push(
      planned(
        "ObservationRecorded",
        ObservationRecorded.fromPartial({
          binding: "MEMORY",
          description: {
            title: "Read 12 entities from memory graph",
            description: `read_graph #${n}`,
            kind: "mcp.tool.read_graph",
          },
          executionId: `exec-${n}`,
          requestId: `req-${n}`,
        }),
        "service:gatekeeper-mcp",
      ),
      planned(
        "ActionSubmitted",
        ActionSubmitted.fromPartial({
          binding: "MEMORY",
          localId: `~${n}`,
          description: {
            title: "Call create_entities on memory",
            description: `Create entity "Bench ${n}" with two observations of moderate length.`,
            descriptionIsComplete: true,
            delivery: Delivery.DELIVERY_SIMULATE,
            actionKind: { tag: "mcp.tool.create_entities", label: "Create entities" },
          },
          payloadJson: JSON.stringify({ entities: [{ name: `Bench ${n}`, observations: ["a", "b"] }] }),
          executionId: `exec-${n}`,
        }),
        "service:gatekeeper-mcp",
      ),
      planned("ActionApproved", { actionId, decidedBy: "user:bench", descriptionDigest: "" }, "user:bench"),
      planned("ActionApplying", { actionId, claimedBy: "worker-1" }, "service:approval"),
      planned("ActionApplied", { actionId, resultJson: '{"ok":true}' }, "service:approval"),
    );
  }
  return out.slice(0, count).map((e) => ({
    type: e.type,
    data: encodeEventData(e),
    metadata: { actor: e.actor, caller: { kind: "agent", id: "chat-bench" }, correlationId: "bench" },
  }));
}

/** Appends `events` to `streamId` in batches of 100 (setup, not timed). */
async function fill(store: EventStore, streamId: string, events: NewEvent[]): Promise<void> {
  let expected = -1;
  for (let i = 0; i < events.length; i += 100)
    expected = (await store.append(streamId, events.slice(i, i + 100), expected)).nextExpectedRevision;
}

/**
 * Times `reps` replays of one workspace through the store and `reps` raw reads of the same rows,
 * interleaved (so drift hits both sides), after one warm-up of each.
 * @throws Error when a side does not see every event.
 */
async function replayFigures(
  store: EventStore,
  rawRead: (streamId: string) => Promise<number>,
  events: number,
  reps: number,
): Promise<ReplayFigures> {
  const workspaceId = `bench-${randomUUID()}`;
  const streamId = `workspace-${workspaceId}`;
  await fill(store, streamId, workspaceEvents(workspaceId, events));
  const streams = new WorkspaceStreams(store);
  const storeMs: number[] = [];
  const rawMs: number[] = [];
  for (let r = 0; r <= reps; r++) {
    let began = performance.now();
    const state = await streams.replay(workspaceId);
    const ms = performance.now() - began;
    if (state.revision !== events - 1)
      throw new Error(`replay folded to ${state.revision}, not ${events - 1}`);
    const applied = [...state.actions.values()].filter(
      (a) => a.status === ActionStatus.ACTION_STATUS_APPLIED,
    ).length;
    if (applied === 0) throw new Error("replay folded no applied action: the bench stream is not decoded");
    began = performance.now();
    const n = await rawRead(streamId);
    const raw = performance.now() - began;
    if (n !== events) throw new Error(`raw read returned ${n} rows, not ${events}`);
    if (r > 0) {
      storeMs.push(ms);
      rawMs.push(raw);
    }
  }
  const storeEventsPerSec = events / (median(storeMs) / 1000);
  const rawEventsPerSec = events / (median(rawMs) / 1000);
  return {
    events,
    reps,
    storeMs: storeMs.map((x) => round(x, 2)),
    rawMs: rawMs.map((x) => round(x, 2)),
    storeEventsPerSec,
    rawEventsPerSec,
  };
}

/** JSON.parse of both JSON columns of each row; returns the row count. */
function parseRows(rows: Array<{ data: string; metadata: string }>): number {
  let n = 0;
  for (const row of rows) {
    JSON.parse(row.data);
    JSON.parse(row.metadata);
    n++;
  }
  return n;
}

function replayRow(backend: string, driver: string, r: ReplayFigures, goal?: string): Row {
  return {
    id: `store.replay.${backend.toLowerCase()}`,
    measurement: `replay events/s, ${backend} (readStream + evolve, ${r.events} events)`,
    value: Math.round(r.storeEventsPerSec),
    baseline: `raw ${driver} SELECT + JSON.parse`,
    baselineValue: Math.round(r.rawEventsPerSec),
    unit: "ev/s",
    ratio: r.storeEventsPerSec / r.rawEventsPerSec,
    ...(goal ? { goal } : {}),
  };
}

/**
 * Runs the event-store bench (see the file comment) and returns its table rows (rates in events/s,
 * ratio = store / raw), the raw figures by backend in `detail`, and `notes` for anything left out.
 * @throws Error when a measured side misbehaves (wrong counts) or PostgreSQL fails to start.
 */
export async function storeBench(
  options: StoreBenchOptions,
): Promise<{ rows: Row[]; detail: Record<string, unknown>; notes: string[] }> {
  const rows: Row[] = [];
  const notes: string[] = [];
  const detail: Record<string, unknown> = {};
  const work = mkdtempSync(join(options.dir, "gatehouse-bench-store-"));
  try {
    // SQLite appends
    const sqliteAppends = [];
    for (const batch of BATCH_SIZES) {
      log(`sqlite appends: events=${options.appendEvents} batch=${batch}`);
      const r = await benchAppends({ events: options.appendEvents, batch, dir: work });
      sqliteAppends.push(r);
      rows.push({
        id: `appends.batch${batch}`,
        measurement: `event appends/s, SQLite, batch ${batch}`,
        value: Math.round(r.eventsPerSec),
        baseline: `raw better-sqlite3 inserts/s, batch ${batch}`,
        baselineValue: Math.round(r.rawInsertsPerSec),
        unit: "ev/s",
        ratio: r.ratio,
        goal: "≥ 0.5x",
      });
    }
    detail.sqliteAppends = sqliteAppends;

    // SQLite replay
    log(`sqlite replay: events=${options.replayEvents} reps=${options.replayReps}`);
    const file = join(work, "replay.db");
    const sqlite = openSqliteEventStore(file);
    const rawDb = new Database(file, { readonly: true });
    try {
      const select = rawDb.prepare<[string], { data: string; metadata: string }>(
        "SELECT * FROM events WHERE stream_id = ? ORDER BY revision ASC",
      );
      const r = await replayFigures(
        sqlite,
        async (streamId) => parseRows(select.all(streamId)),
        options.replayEvents,
        options.replayReps,
      );
      detail.sqliteReplay = r;
      rows.push(replayRow("SQLite", "better-sqlite3", r, "≥ 100k ev/s"));
    } finally {
      rawDb.close();
      await sqlite.close();
    }

    if (!options.postgres) {
      notes.push("PostgreSQL left out (BENCH_STORE_POSTGRES=0)");
      return { rows, detail, notes };
    }
    try {
      postgresBinDir();
    } catch (error) {
      notes.push(`PostgreSQL left out: ${(error as Error).message}`);
      return { rows, detail, notes };
    }
    log("starting PostgreSQL on 127.0.0.1");
    const server: PostgresServer = await startPostgresServer({ migrate: true });
    try {
      const postgresAppends = [];
      for (const batch of BATCH_SIZES) {
        log(`postgres appends: events=${options.appendEvents} batch=${batch}`);
        const r = await benchPostgresAppends(server.url, options.appendEvents, batch);
        postgresAppends.push(r);
        rows.push({
          id: `store.pg.appends.batch${batch}`,
          measurement: `event appends/s, PostgreSQL, batch ${batch}`,
          value: Math.round(r.eventsPerSec),
          baseline: `raw pg inserts/s, batch ${batch}`,
          baselineValue: Math.round(r.rawInsertsPerSec),
          unit: "ev/s",
          ratio: r.ratio,
          goal: "≥ 0.5x",
        });
      }
      detail.postgresAppends = postgresAppends;

      log(`postgres replay: events=${options.replayEvents} reps=${options.replayReps}`);
      const store = await openPostgresEventStore(server.url);
      const client = new pg.Client({ connectionString: server.url });
      await client.connect();
      try {
        const r = await replayFigures(
          store,
          async (streamId) =>
            parseRows(
              (
                await client.query<{ data: string; metadata: string }>(
                  "SELECT * FROM gatehouse_events WHERE stream_id = $1 ORDER BY revision ASC",
                  [streamId],
                )
              ).rows,
            ),
          options.replayEvents,
          options.replayReps,
        );
        detail.postgresReplay = r;
        rows.push(replayRow("PostgreSQL", "pg", r));
      } finally {
        await client.end();
        await store.close();
      }
    } finally {
      await server.stop();
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  return { rows, detail, notes };
}

/** Run alone: the table, and bench-results/store.json. */
async function main(): Promise<void> {
  const startedAt = new Date();
  const loadBefore = loadavg().map((x) => round(x, 2));
  const t0 = performance.now();
  const options = storeBenchOptionsFromEnv(tmpdir());
  const { rows, detail, notes } = await storeBench(options);
  for (const row of rows) row.ratio = round(row.ratio, 3);
  const loadAfter = loadavg().map((x) => round(x, 2));
  if (Math.max(loadBefore[0] ?? 0, loadAfter[0] ?? 0) > cpus().length)
    notes.push(
      `1-min load average ${loadBefore[0]} before / ${loadAfter[0]} after on ${cpus().length} CPUs: other work was running, expect noise`,
    );
  const totalSec = round((performance.now() - t0) / 1000, 1);
  printTable(rows);
  console.log(
    `\ntotal: ${totalSec}s   node ${process.version}   load ${loadBefore[0]} -> ${loadAfter[0]} (${cpus().length} CPUs)`,
  );
  for (const n of notes) console.log(`note: ${n}`);
  const outDir = join(ROOT, "bench-results");
  mkdirSync(outDir, { recursive: true });
  const outFile = join(outDir, "store.json");
  const { dir: _dir, ...config } = options;
  writeFileSync(
    outFile,
    `${JSON.stringify(
      {
        startedAt: startedAt.toISOString(),
        totalSec,
        node: process.version,
        platform: `${process.platform}-${process.arch}`,
        cpus: cpus().length,
        loadAverage: { before: loadBefore, after: loadAfter },
        config,
        rows,
        detail,
        notes,
      },
      null,
      2,
    )}\n`,
  );
  console.log(`wrote ${outFile}`);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}
