import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { mintCallerToken } from "@gatehouse/caller-token";
import { type DevStack, startDevStack } from "@gatehouse/dev-stack";
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
import {
  benchSql,
  connectDriver,
  type Driver,
  idOf,
  pendingWrite,
  psqlSamples,
  READ_PW,
  READ_SQL,
  WRITE_PW,
} from "./postgres-db.ts";
import {
  envInt,
  envSandbox,
  gitCommit,
  log,
  median,
  printTable,
  type Row,
  returned,
  round,
  runBench,
  type Stats,
  stats,
  timed,
  unary,
} from "./support.ts";

const ROOT = resolve(fileURLToPath(import.meta.url), "../..");
const CALLS = envInt("BENCH_PG_CALLS", 200);
const PSQL_RUNS = envInt("BENCH_PG_PSQL_RUNS", 20);
const EXECS = envInt("BENCH_PG_EXECS", 30);
const READS = envInt("BENCH_PG_READS", 20);
const REPS = envInt("BENCH_PG_REPS", 5);
const PENDING = envInt("BENCH_PG_PENDING", 100);
const ROWS = envInt("BENCH_PG_ROWS", 5000);
const SANDBOX = envSandbox();
const WARMUP = 5;

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
    const psql = await psqlSamples(server, PSQL_RUNS, ROWS);

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
          executionId: "",
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
      const r = await db.query({ sql: READ_SQL, params: [idOf(i, ROWS)] });
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
    const d = await connectDriver(server, PENDING, ROWS);
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

runBench(main);
