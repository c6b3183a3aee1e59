/**
 * `npm run bench:postgres` (also run by `npm run bench`): the PostgreSQL gatekeeper, each figure next
 * to a baseline measured in the same run against the same real PostgreSQL (Debian's, started on
 * 127.0.0.1 by `startPostgresServer`, removed afterwards) holding `bench.shop.items` (BENCH_PG_ROWS rows).
 *   1. Baselines: the 1-row read `SELECT … FROM items WHERE id = $1` by the `pg` driver on one connected
 *      client (p50/p99 of single statements); the same read in the transaction the gatekeeper wraps
 *      around it (BEGIN READ ONLY, set_config of statement_timeout and search_path, the SELECT,
 *      ROLLBACK); and, when `psql` is on PATH, `psql -c` of it per call (a process start each time).
 *   2. The same read through the gatekeeper's gRPC API directly: one open session, `query` called
 *      BENCH_PG_CALLS times (the statement check, the transaction and the observation appended to the
 *      approval service included; no sandbox, no kernel), and that observation alone
 *      (ApprovalQueue.AuthorizeObservation sent straight to the approval service) and its statement
 *      check alone (`checkStatementSync`, in this process). The driver's calls,
 *      these and the pending side of 4 are interleaved call by call, so load changes hit all alike.
 *   3. The same read through the whole path: Kernel.ExecuteCode of a snippet calling
 *      `env.DB.query({sql, params})` once (sandbox → kernel relay → gatekeeper → database, session
 *      opened per execution), next to a trivial snippet; and the cost of one more read inside a
 *      snippet as (median T_K − median T_0) / K.
 *   4. Simulation: BENCH_PG_PENDING (100) pending writes (UPDATE and INSERT through `execute`, never
 *      approved) in a second workspace; the same read there (every pending write replayed under a
 *      savepoint first), over gRPC and in a snippet, next to the same read with none pending, and the
 *      driver running the same replay transaction itself (the floor).
 * Env: BENCH_PG_CALLS (default 200) driver and gRPC calls per side, BENCH_PG_PSQL_RUNS (20),
 * BENCH_PG_EXECS (30) ExecuteCode samples per snippet, BENCH_PG_READS (20) K, BENCH_PG_REPS (5)
 * repetitions of the T_K / T_0 snippets, BENCH_PG_PENDING (100), BENCH_PG_ROWS (5000),
 * BENCH_SANDBOX (auto | gvisor | none). Writes bench-results/postgres.json.
 */
import { execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { accessSync, constants, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { delimiter, join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { mintCallerToken } from "@gatehouse/caller-token";
import { type PostgresServer, startPostgresServer } from "@gatehouse/event-store/postgres-server";
import { type ClientSession, connectSession } from "@gatehouse/gatekeeper-kit";
import {
  checkStatementSync,
  createRegistry,
  loadParser,
  parsePostgresResource,
} from "@gatehouse/gatekeeper-postgres";
import { ApprovalQueueClient, GatekeeperClient, KernelClient } from "@gatehouse/proto";
import { credentials } from "@grpc/grpc-js";
import pg from "pg";
import pino from "pino";
import { type DevStack, startDevStack } from "../packages/cli/src/dev-stack.ts";
import {
  envInt,
  envStr,
  gitCommit,
  log,
  median,
  printTable,
  type Row,
  returned,
  round,
  type Stats,
  stats,
  unary,
} from "./bench-support.ts";

const ROOT = resolve(fileURLToPath(import.meta.url), "../..");
const CALLS = envInt("BENCH_PG_CALLS", 200);
const PSQL_RUNS = envInt("BENCH_PG_PSQL_RUNS", 20);
const EXECS = envInt("BENCH_PG_EXECS", 30);
const READS = envInt("BENCH_PG_READS", 20);
const REPS = envInt("BENCH_PG_REPS", 5);
const PENDING = envInt("BENCH_PG_PENDING", 100);
const ROWS = envInt("BENCH_PG_ROWS", 5000);
const SANDBOX = envStr("BENCH_SANDBOX", "auto") as "auto" | "gvisor" | "none";
if (!["auto", "gvisor", "none"].includes(SANDBOX)) throw new Error("BENCH_SANDBOX must be auto|gvisor|none");
const WARMUP = 5;
const run = promisify(execFile);

/** The read every side runs (unqualified: the binding's scope is `#schema=shop`). */
const READ_SQL = "SELECT id, name, price, stock FROM items WHERE id = $1";
/** The i-th id read: spread over the table, the same sequence on every side. */
const idOf = (i: number) => 1 + ((i * 7919) % ROWS);
const READ_PW = "bench-read-pw";
const WRITE_PW = "bench-write-pw";

/** Roles, schema and rows of the `bench` database (run as the superuser). */
function benchSql(rows: number): string {
  return `
CREATE ROLE bench_read LOGIN PASSWORD '${READ_PW}';
CREATE ROLE bench_write LOGIN PASSWORD '${WRITE_PW}';
CREATE SCHEMA shop;
CREATE TABLE shop.items (id int PRIMARY KEY, name text NOT NULL, price numeric(10,2) NOT NULL, stock int NOT NULL);
INSERT INTO shop.items SELECT g, 'item ' || g, (g % 997) / 10.0 + 1, g % 50 FROM generate_series(1, ${rows}) AS g;
GRANT USAGE ON SCHEMA shop TO bench_read, bench_write;
GRANT SELECT ON ALL TABLES IN SCHEMA shop TO bench_read;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA shop TO bench_write;
ANALYZE shop.items;
`;
}

/** The i-th pending write: UPDATEs of existing rows and INSERTs of new ones, alternating. */
function pendingWrite(i: number, rows: number): { sql: string; params: (string | number)[] } {
  return i % 2 === 0
    ? { sql: "UPDATE items SET stock = stock + 1 WHERE id = $1", params: [idOf(i)] }
    : {
        sql: "INSERT INTO items (id, name, price, stock) VALUES ($1, $2, $3, $4)",
        params: [rows + 1 + i, `pending ${i}`, 9.99, 1],
      };
}

/** ms of each `call(i)`, after `warmup` unmeasured ones. */
async function timed(n: number, warmup: number, call: (i: number) => Promise<void>): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < n + warmup; i++) {
    const began = performance.now();
    await call(i);
    if (i >= warmup) samples.push(performance.now() - began);
  }
  return samples;
}

/** True when `name` is an executable on PATH. */
function onPath(name: string): boolean {
  return (process.env.PATH ?? "").split(delimiter).some((dir) => {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return true;
    } catch {
      return false;
    }
  });
}

/** The `query` result as the benchmark reads it. */
interface QueryResult {
  rows: unknown[];
  pending: string[];
}

/** The stub of a PostgreSQL binding over a direct gRPC session. */
interface DbStub {
  query(args: { sql: string; params: unknown[] }): Promise<QueryResult>;
}

/** A workspace bound to the bench database as DB, and a caller token for its binding (as the kernel mints one). */
async function boundWorkspace(
  kernel: KernelClient,
  name: string,
  url: string,
  secret: string,
): Promise<{ id: string; url: string; token: string }> {
  const id = (await unary(kernel, kernel.createWorkspace, { name, owner: "user:bench", members: [] })).id;
  await unary(kernel, kernel.introduceResource, { workspaceId: id, url, name: "DB" });
  const described = await unary(kernel, kernel.describeBindings, { workspaceId: id });
  const binding = described.bindings.find((b) => b.name === "DB");
  if (!binding) throw new Error(`workspace ${name} has no DB binding after introducing ${url}`);
  // Nothing was appended since the introduction, so the stream revision is the binding's grant.
  const token = mintCallerToken(secret, {
    workspaceId: id,
    binding: "DB",
    caller: { kind: "agent", id: "bench" },
    executionId: `bench-direct-${name}`,
    grant: described.revision,
  });
  return { id, url: binding.url, token };
}

/** A snippet running the 1-row read `k` times (k = 0: a trivial snippet); returns the rows read. */
function readSnippet(k: number): string {
  return `export default async (env: any) => {
  let n = 0;
  for (let i = 0; i < ${k}; i++)
    n += (await env.DB.query({ sql: ${JSON.stringify(READ_SQL)}, params: [1 + ((i * 7919) % ${ROWS})] })).rows.length;
  return n;
}`;
}

/** The driver side's calls, each one timed sample: a connected client per role on the bench database. */
interface Driver {
  /** The read alone, as one statement. */
  plain(i: number): Promise<void>;
  /** The read in the transaction the gatekeeper wraps around it (no pending writes). */
  tx(i: number): Promise<void>;
  /** The same transaction as the write role with `pending` writes replayed under savepoints first. */
  replay(i: number): Promise<void>;
  close(): Promise<void>;
}

/** Connects the driver's clients (read role and write role). */
async function connectDriver(server: PostgresServer, pending: number): Promise<Driver> {
  const url = (user: string, pw: string) =>
    server.url.replace(/\/\/[^@]+@/, `//${user}:${pw}@`).replace(/\/gatehouse$/, "/bench");
  const reader = new pg.Client({ connectionString: url("bench_read", READ_PW) });
  const writer = new pg.Client({ connectionString: url("bench_write", WRITE_PW) });
  await reader.connect();
  await writer.connect();
  await reader.query("SET search_path = shop");
  const read = async (c: pg.Client, i: number) => {
    const r = await c.query(READ_SQL, [idOf(i)]);
    if (r.rows.length !== 1) throw new Error(`the driver read ${r.rows.length} rows of id ${idOf(i)}`);
  };
  /** BEGIN, settings, the replayed writes each under a savepoint, the read, ROLLBACK. */
  const inTx = async (c: pg.Client, i: number, writes: number) => {
    await c.query(writes > 0 ? "BEGIN" : "BEGIN READ ONLY");
    await c.query("SELECT set_config('statement_timeout', $1, true), set_config('search_path', $2, true)", [
      "5000",
      "shop",
    ]);
    for (let w = 0; w < writes; w++) {
      const { sql, params } = pendingWrite(w, ROWS);
      await c.query("SAVEPOINT replay");
      await c.query(sql, params);
      await c.query("RELEASE SAVEPOINT replay");
    }
    if (writes > 0) await c.query("SET LOCAL transaction_read_only = on");
    await read(c, i);
    await c.query("ROLLBACK");
  };
  return {
    plain: (i) => read(reader, i),
    tx: (i) => inTx(reader, i, 0),
    replay: (i) => inTx(writer, i, pending),
    async close() {
      await reader.end().catch(() => {});
      await writer.end().catch(() => {});
    },
  };
}

/** `psql -c` of the read per call (literal id: psql -c takes no bind parameters), or undefined without psql. */
async function psqlSamples(server: PostgresServer): Promise<number[] | undefined> {
  if (!onPath("psql")) return undefined;
  const args = (i: number) => [
    "-X",
    "-q",
    "-A",
    "-t",
    "-h",
    "127.0.0.1",
    "-p",
    String(server.port),
    "-U",
    "bench_read",
    "-d",
    "bench",
    "-c",
    READ_SQL.replace("FROM items", "FROM shop.items").replace("$1", String(idOf(i))),
  ];
  return timed(PSQL_RUNS, 1, async (i) => {
    const { stdout } = await run("psql", args(i), {
      env: { ...process.env, PGPASSWORD: READ_PW },
      timeout: 60_000,
    });
    if (!stdout.trim()) throw new Error(`psql printed nothing for id ${idOf(i)}`);
  });
}

/** A row comparing two Stats' percentile `q`. */
function pRow(
  id: string,
  q: "p50" | "p99",
  measurement: string,
  value: Stats,
  baseline: string,
  base: Stats,
): Row {
  return {
    id: `${id}.${q}`,
    measurement: `${measurement} ${q}`,
    value: value[q],
    baseline: `${baseline} ${q}`,
    baselineValue: base[q],
    unit: "ms",
    ratio: round(value[q] / base[q], 2),
  };
}

async function main() {
  const loadBefore = loadavg().map((x) => round(x, 2));
  const work = mkdtempSync(join(tmpdir(), "gatehouse-bench-pg-"));
  const secret = randomBytes(32).toString("base64url");
  let server: PostgresServer | undefined;
  let stack: DevStack | undefined;
  let kernel: KernelClient | undefined;
  let gatekeeper: GatekeeperClient | undefined;
  let queue: ApprovalQueueClient | undefined;
  let driver: Driver | undefined;
  const sessions: ClientSession<never>[] = [];
  try {
    log(`starting PostgreSQL and seeding bench.shop.items with ${ROWS} rows`);
    server = await startPostgresServer();
    const boot = new pg.Client({ connectionString: server.url });
    await boot.connect();
    try {
      await boot.query("CREATE DATABASE bench");
    } finally {
      await boot.end();
    }
    const seed = new pg.Client({ connectionString: server.url.replace(/\/gatehouse$/, "/bench") });
    await seed.connect();
    try {
      await seed.query(benchSql(ROWS));
    } finally {
      await seed.end();
    }

    log(`psql -c x${PSQL_RUNS}`);
    const psql = await psqlSamples(server);

    // The gatekeeper reads the role passwords from the environment the registry names.
    process.env.BENCH_PG_READ_PW = READ_PW;
    process.env.BENCH_PG_WRITE_PW = WRITE_PW;
    const registry = createRegistry({
      servers: {
        benchpg: {
          host: "127.0.0.1",
          port: server.port,
          databases: ["bench"],
          readRole: { user: "bench_read", passwordEnv: "BENCH_PG_READ_PW" },
          writeRole: { user: "bench_write", passwordEnv: "BENCH_PG_WRITE_PW" },
        },
      },
    });
    log(`starting the dev stack (sandbox ${SANDBOX}, PostgreSQL gatekeeper in-process)`);
    stack = await startDevStack({
      dataDir: join(work, "stack"),
      sandbox: SANDBOX,
      postgresRegistry: registry,
      callerTokenSecret: secret,
      logger: pino({ level: "fatal" }),
    });
    const k = new KernelClient(stack.addresses.kernel, credentials.createInsecure());
    kernel = k;
    if (!stack.addresses.postgres) throw new Error("the dev stack did not start the PostgreSQL gatekeeper");
    const gk = new GatekeeperClient(stack.addresses.postgres, credentials.createInsecure());
    gatekeeper = gk;
    const resource = "postgres://benchpg/bench#schema=shop";
    const wsRead = await boundWorkspace(k, "bench-pg", resource, secret);
    const wsPending = await boundWorkspace(k, "bench-pg-pending", resource, secret);
    const exec = async (ws: string, code: string) =>
      returned(
        await unary(k, k.executeCode, {
          workspaceId: ws,
          code,
          caller: { kind: "agent", id: "bench" },
          limits: { wallTimeMs: 300_000, heapMb: 0, outputBytes: 0 },
        }),
      );

    log(`${PENDING} pending writes (execute, not approved) in the second workspace`);
    const submitBegan = performance.now();
    const writes = Array.from({ length: PENDING }, (_, i) => pendingWrite(i, ROWS));
    const submitted = await exec(
      wsPending.id,
      `export default async (env: any) => {
  const writes = ${JSON.stringify(writes)};
  let n = 0;
  for (const w of writes) n += (await env.DB.execute(w)).rowCount;
  return n;
}`,
    );
    const submitMs = performance.now() - submitBegan;
    if (submitted !== PENDING)
      throw new Error(`the pending writes changed ${submitted} rows, not ${PENDING}`);

    const open = (ws: { id: string; url: string; token: string }) => {
      const s = connectSession<never>(gk.openSession(), {
        workspaceId: ws.id,
        binding: "DB",
        url: ws.url,
        trust: "byo",
        callerToken: ws.token,
        executionId: `bench-direct-${ws.id}`,
      });
      sessions.push(s);
      return s.stub as unknown as DbStub;
    };
    const dbRead = open(wsRead);
    const dbPending = open(wsPending);
    const grpcRead = async (db: DbStub, i: number, pendingWanted: number) => {
      const r = await db.query({ sql: READ_SQL, params: [idOf(i)] });
      if (r.rows.length !== 1 || r.pending.length !== pendingWanted)
        throw new Error(`gRPC query read ${r.rows.length} rows with ${r.pending.length} pending`);
    };
    const q = new ApprovalQueueClient(stack.addresses.approval, credentials.createInsecure());
    queue = q;
    /** The observation alone: what the gatekeeper appends for a 1-row page, sent straight to the approval service. */
    const observeOnly = async (i: number) => {
      await unary(q, q.authorizeObservation, {
        callerToken: wsRead.token,
        description: {
          title: "Query on benchpg/bench#schema=shop: 1 row(s) from offset 0",
          description: `bench observation ${i}: ${READ_SQL}`,
          containsRestrictedData: false,
          kind: "postgres.read",
          page: 0,
        },
        requestId: "",
      });
    };
    const d = await connectDriver(server, PENDING);
    driver = d;
    log(
      `${CALLS} rounds, interleaved: driver (read, read in a transaction, ${PENDING} replayed + read), gatekeeper gRPC read with 0 and ${PENDING} pending, AuthorizeObservation alone`,
    );
    await loadParser();
    const scope = parsePostgresResource(resource).scope;
    /** The statement check alone, in this process: libpg_query's parse and the scope walk the gatekeeper runs per query. */
    const checkOnly = async () => {
      const decision = checkStatementSync(READ_SQL, { method: "read", scope, allowDdl: false });
      if (!decision.ok) throw new Error(`the scope check refused the read: ${decision.reason}`);
    };
    const sides = {
      plain: (i: number) => d.plain(i),
      tx: (i: number) => d.tx(i),
      replay: (i: number) => d.replay(i),
      grpcNone: (i: number) => grpcRead(dbRead, i, 0),
      grpcPending: (i: number) => grpcRead(dbPending, i, PENDING),
      observe: observeOnly,
      check: checkOnly,
    };
    const samples = Object.fromEntries(Object.keys(sides).map((key) => [key, [] as number[]])) as Record<
      keyof typeof sides,
      number[]
    >;
    for (let i = 0; i < CALLS + WARMUP; i++) {
      // Interleaved, so drift (other load on the machine, stream growth) hits every side alike.
      for (const [key, call] of Object.entries(sides) as [
        keyof typeof sides,
        (i: number) => Promise<void>,
      ][]) {
        const [t] = await timed(1, 0, () => call(i));
        if (i >= WARMUP) samples[key].push(t ?? Number.NaN);
      }
    }

    log(`ExecuteCode: ${EXECS} snippets with one read, interleaved with trivial snippets`);
    const exec1: number[] = [];
    const exec0: number[] = [];
    for (let i = 0; i < EXECS + WARMUP; i++) {
      const [a] = await timed(1, 0, async () => {
        if ((await exec(wsRead.id, readSnippet(1))) !== 1) throw new Error("the snippet read no row");
      });
      const [b] = await timed(1, 0, async () => {
        await exec(wsRead.id, readSnippet(0));
      });
      if (i >= WARMUP) {
        exec1.push(a ?? Number.NaN);
        exec0.push(b ?? Number.NaN);
      }
    }
    log(`ExecuteCode: ${REPS} reps of K=${READS} reads (0 and ${PENDING} pending) and K=0`);
    const kNone: number[] = [];
    const kPending: number[] = [];
    const kZero: number[] = [];
    const whole = async (ws: string, reads: number) => {
      const began = performance.now();
      if ((await exec(ws, readSnippet(reads))) !== reads) throw new Error("a snippet read fewer rows");
      return performance.now() - began;
    };
    await whole(wsPending.id, 2);
    for (let r = 0; r < REPS; r++) {
      kNone.push(await whole(wsRead.id, READS));
      kPending.push(await whole(wsPending.id, READS));
      kZero.push(await whole(wsRead.id, 0));
    }

    const plain = stats(samples.plain);
    const tx = stats(samples.tx);
    const replay = stats(samples.replay);
    const gNone = stats(samples.grpcNone);
    const gPending = stats(samples.grpcPending);
    const observed = stats(samples.observe);
    const checked = stats(samples.check);
    const e1 = stats(exec1);
    const e0 = stats(exec0);
    const perRead = (xs: number[]) => (median(xs) - median(kZero)) / READS;
    const inSnippetNone = round(perRead(kNone), 3);
    const inSnippetPending = round(perRead(kPending), 3);
    const perWrite = (hi: number, lo: number) => round((hi - lo) / PENDING, 4);
    const rows: Row[] = [
      pRow(
        "pg.driver.tx",
        "p50",
        "driver: the read in the gatekeeper's transaction",
        tx,
        "driver: the read alone",
        plain,
      ),
      pRow(
        "pg.grpc",
        "p50",
        "1-row read via gatekeeper gRPC session",
        gNone,
        "driver: the read alone",
        plain,
      ),
      pRow(
        "pg.grpc",
        "p99",
        "1-row read via gatekeeper gRPC session",
        gNone,
        "driver: the read alone",
        plain,
      ),
      pRow(
        "pg.observation",
        "p50",
        "its observation alone: ApprovalQueue.AuthorizeObservation",
        observed,
        "1-row read via gatekeeper gRPC session",
        gNone,
      ),
      pRow(
        "pg.check",
        "p50",
        "its statement check alone (libpg_query parse + scope)",
        checked,
        "1-row read via gatekeeper gRPC session",
        gNone,
      ),
      pRow("pg.exec", "p50", "ExecuteCode, snippet with one read", e1, "driver: the read alone", plain),
      pRow("pg.exec", "p99", "ExecuteCode, snippet with one read", e1, "driver: the read alone", plain),
      pRow(
        "pg.exec.vs_trivial",
        "p50",
        "ExecuteCode, snippet with one read",
        e1,
        "ExecuteCode, trivial snippet",
        e0,
      ),
      {
        id: "pg.in_snippet",
        measurement: `one more read in a snippet, (med T_K - med T_0)/K, K=${READS}`,
        value: inSnippetNone,
        baseline: "driver: the read alone p50",
        baselineValue: plain.p50,
        unit: "ms",
        ratio: round(inSnippetNone / plain.p50, 2),
      },
    ];
    if (psql) {
      const ps = stats(psql);
      rows.push(
        pRow(
          "pg.psql",
          "p50",
          "psql -c per call (process start included)",
          ps,
          "driver: the read alone",
          plain,
        ),
      );
    }
    rows.push(
      pRow(
        "pg.pending.grpc",
        "p50",
        `gRPC read with ${PENDING} pending writes`,
        gPending,
        "same read, 0 pending",
        gNone,
      ),
      pRow(
        "pg.pending.grpc",
        "p99",
        `gRPC read with ${PENDING} pending writes`,
        gPending,
        "same read, 0 pending",
        gNone,
      ),
      {
        id: "pg.pending.in_snippet",
        measurement: `one more read in a snippet with ${PENDING} pending, (T_K - T_0)/K`,
        value: inSnippetPending,
        baseline: "same with 0 pending",
        baselineValue: inSnippetNone,
        unit: "ms",
        ratio: round(inSnippetPending / inSnippetNone, 2),
      },
      pRow(
        "pg.pending.driver",
        "p50",
        `driver: ${PENDING} writes under savepoints + the read`,
        replay,
        "driver: the read in the same transaction, no writes",
        tx,
      ),
      {
        id: "pg.pending.per_write",
        measurement: "simulation cost per pending write (gRPC p50 difference / N)",
        value: perWrite(gPending.p50, gNone.p50),
        baseline: "driver replay per write (p50 difference / N)",
        baselineValue: perWrite(replay.p50, tx.p50),
        unit: "ms",
        ratio: round((gPending.p50 - gNone.p50) / (replay.p50 - tx.p50), 2),
      },
    );
    printTable(rows);
    const loadAfter = loadavg().map((x) => round(x, 2));
    console.log(
      `sandbox ${stack.sandboxMode}; ${cpus().length} CPUs, load ${loadBefore[0]} -> ${loadAfter[0]}; ` +
        `${PENDING} pending writes submitted in ${round(submitMs, 0)} ms; psql ${psql ? "measured" : "not on PATH"}`,
    );
    const out = join(ROOT, "bench-results");
    mkdirSync(out, { recursive: true });
    writeFileSync(
      join(out, "postgres.json"),
      `${JSON.stringify(
        {
          at: new Date().toISOString(),
          commit: gitCommit(ROOT),
          node: process.version,
          sandbox: stack.sandboxMode,
          cpus: cpus().length,
          loadAverage: { before: loadBefore, after: loadAfter },
          config: {
            calls: CALLS,
            psqlRuns: PSQL_RUNS,
            execs: EXECS,
            reads: READS,
            reps: REPS,
            pending: PENDING,
            rows: ROWS,
          },
          rows,
          detail: {
            driverMs: { plain, tx, replay },
            psqlMs: psql ? stats(psql) : null,
            grpcMs: { none: gNone, pending: gPending },
            authorizeObservationMs: observed,
            statementCheckMs: checked,
            executeCodeMs: { oneRead: e1, trivial: e0 },
            snippetMs: { k: READS, none: kNone, pending: kPending, zero: kZero },
            submitPendingMs: round(submitMs, 1),
          },
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    for (const s of sessions) s.close();
    gatekeeper?.close();
    queue?.close();
    await driver?.close();
    kernel?.close();
    await stack?.close().catch((e: unknown) => log(`closing the dev stack: ${(e as Error).message}`));
    await server?.stop().catch((e: unknown) => log(`stopping PostgreSQL: ${(e as Error).message}`));
    rmSync(work, { recursive: true, force: true });
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
