/**
 * Test helpers: a real PostgreSQL (Debian's, started on loopback by @gatehouse/event-store's
 * startPostgresServer) with a `shop` database, read and write roles; a FAKE recording
 * ApprovalQueue on loopback (it stands in for services/approval, which a service may not import);
 * and a running gatekeeper-postgres with a session client; gRPC helpers for ApplyAction,
 * PrepareRevert and CheckObserver; and a
 * gatekeeper child process that SIGKILLs itself between an apply's commit and its reply.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { type PostgresServer, startPostgresServer } from "@gatehouse/event-store/postgres-server";
import { connectSession, readApplyOutcome } from "@gatehouse/gatekeeper-kit";
import { FakeApprovalQueue } from "@gatehouse/gatekeeper-kit/testing";
import {
  type ApplyActionResponse,
  type CheckObserverRequest,
  type CheckObserverResponse,
  GatekeeperClient,
  type PrepareRevertRequest,
  type PrepareRevertResponse,
} from "@gatehouse/proto";
import { callUnary, waitUntil } from "@gatehouse/service-kit";
import { credentials } from "@grpc/grpc-js";
import pg from "pg";
import { pino } from "pino";
import {
  createRegistry,
  type Limits,
  type PostgresGatekeeper,
  type RegistryInput,
  startPostgresGatekeeper,
} from "../src/index.ts";

export { FakeApprovalQueue };

type ServerInput = NonNullable<RegistryInput["servers"]>[string];

/** The schema every test starts from (database `shop`). */
export const SHOP_SQL = `
CREATE ROLE gatehouse_read LOGIN PASSWORD 'read-pw';
CREATE ROLE gatehouse_write LOGIN PASSWORD 'write-pw';
CREATE ROLE bob LOGIN PASSWORD 'bob-pw';
CREATE SCHEMA sales;
CREATE SCHEMA secret;
CREATE TABLE sales.customers (id int PRIMARY KEY, name text NOT NULL, email text, tier text NOT NULL DEFAULT 'basic');
CREATE TABLE sales.orders (id int PRIMARY KEY, customer_id int NOT NULL REFERENCES sales.customers(id), total numeric(10,2) NOT NULL);
CREATE TABLE sales.audit (note text);
CREATE TABLE secret.keys (id int PRIMARY KEY, k text);
INSERT INTO sales.customers VALUES (1, 'Ada', 'ada@example.com', 'gold'), (2, 'Bo', 'bo@example.com', 'basic'), (3, 'Cy', NULL, 'basic');
INSERT INTO sales.orders VALUES (10, 1, 12.50), (11, 2, 99.00);
INSERT INTO secret.keys VALUES (1, 'hunter2');
GRANT USAGE ON SCHEMA sales TO gatehouse_read, gatehouse_write, bob;
GRANT SELECT ON ALL TABLES IN SCHEMA sales TO gatehouse_read;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA sales TO gatehouse_write;
GRANT SELECT ON sales.customers TO bob;
GRANT CREATE ON DATABASE shop TO gatehouse_write;
`;

/** A running database server with the shop database. */
export interface Db {
  server: PostgresServer;
  port: number;
  /** Runs SQL as the superuser on `shop`. */
  admin<T extends pg.QueryResultRow = Record<string, unknown>>(sql: string, params?: unknown[]): Promise<T[]>;
  /** A superuser client on `shop` (the caller ends it). */
  client(): Promise<pg.Client>;
  stop(): Promise<void>;
}

/**
 * Starts the server and the shop database. `requirePasswords`: roles other than the superuser must
 * give their password (startPostgresServer's option), for tests of a wrong password.
 */
export async function startDb(options: { requirePasswords?: boolean } = {}): Promise<Db> {
  const server = await startPostgresServer({ logStatements: true, ...options });
  const boot = new pg.Client({ connectionString: server.url });
  await boot.connect();
  await boot.query("CREATE DATABASE shop");
  await boot.end();
  const shopUrl = server.url.replace(/\/gatehouse$/, "/shop");
  const pool = new pg.Pool({ connectionString: shopUrl, max: 4 });
  // pool.end() resolves before its clients' sockets close; stop() waits for each client's `end`
  // so the server's shutdown never reaches a still-open client (an uncaught 57P01 on the pool).
  const ended: Promise<void>[] = [];
  pool.on("connect", (c) => ended.push(new Promise((res) => c.once("end", () => res()))));
  await pool.query(SHOP_SQL);
  return {
    server,
    port: server.port,
    admin: async (sql, params) => (await pool.query(sql, params)).rows,
    async client() {
      const c = new pg.Client({ connectionString: shopUrl });
      await c.connect();
      return c;
    },
    async stop() {
      await pool.end();
      await Promise.all(ended);
      await server.stop();
    },
  };
}

/** The registry input of a test server (name `shop`) listening on 127.0.0.1:`port` (plain data: a child process gets it as JSON). */
export function shopRegistryInput(port: number, extra: Partial<ServerInput> = {}): RegistryInput {
  return {
    servers: {
      shop: {
        host: "127.0.0.1",
        port,
        databases: ["shop"],
        readRole: { user: "gatehouse_read", passwordEnv: "SHOP_READ_PW" },
        writeRole: { user: "gatehouse_write", passwordEnv: "SHOP_WRITE_PW" },
        restrictedColumns: ["sales.customers.email"],
        ...extra,
      },
    },
  };
}

/** The registry of a test server (name `shop`). */
export function registryFor(db: Db, extra: Partial<ServerInput> = {}) {
  return createRegistry(shopRegistryInput(db.port, extra));
}

/** The methods of a PostgreSQL binding as a test calls them. */
export interface DbApi {
  query(args: unknown): Promise<{
    columns: { name: string; type: string }[];
    rows: Record<string, unknown>[];
    offset: number;
    more: boolean;
    nextOffset?: number;
    pending: string[];
    skippedPending?: { id: string; error: string }[];
  }>;
  listTables(): Promise<{ tables: { schema: string; name: string; kind: string }[] }>;
  describeTable(
    args: unknown,
  ): Promise<{ columns: { name: string; restricted: boolean }[]; primaryKey: string[] }>;
  execute(args: unknown): Promise<{ id: string; pending: true; rowCount: number }>;
}

/** A running gatekeeper, its fake approval queue and a gRPC client. */
export interface Harness {
  gk: PostgresGatekeeper;
  approval: FakeApprovalQueue;
  client: GatekeeperClient;
  open(url: string, binding?: string): { db: DbApi; close(): void };
  apply(url: string, localId: string, binding?: string): Promise<ApplyActionResponse>;
  reject(localId: string, binding?: string): Promise<void>;
  close(): Promise<void>;
}

export const ENV = { SHOP_READ_PW: "read-pw", SHOP_WRITE_PW: "write-pw" };

export async function startHarness(
  db: Db,
  opts: {
    limits?: Partial<Limits>;
    registry?: Partial<ServerInput>;
    approval?: FakeApprovalQueue;
    /** The port the registry names for server `shop` (default: the database's; a proxy's, a closed one). */
    serverPort?: number;
    /** The password variables the registry reads (default ENV). */
    env?: NodeJS.ProcessEnv;
  } = {},
): Promise<Harness> {
  const approval = opts.approval ?? (await new FakeApprovalQueue({ binding: "DB" }).start());
  const gk = await startPostgresGatekeeper({
    registry: createRegistry(shopRegistryInput(opts.serverPort ?? db.port, opts.registry)),
    approvalAddress: `127.0.0.1:${approval.port}`,
    host: "127.0.0.1",
    port: 0,
    env: opts.env ?? ENV,
    ...(opts.limits ? { limits: opts.limits } : {}),
    logger: pino({ level: process.env.TEST_LOG ?? "silent" }),
  });
  const sessions: { close(): void }[] = [];
  const client = new GatekeeperClient(`127.0.0.1:${gk.port}`, credentials.createInsecure());
  const h: Harness = {
    gk,
    approval,
    client,
    open(url, binding = "DB") {
      const s = connectSession<DbApi & Record<string, never>>(client.openSession(), {
        workspaceId: "ws-1",
        binding,
        url,
        trust: "byo",
        callerToken: "token-1",
        executionId: "exec-1",
      });
      sessions.push(s);
      return { db: s.stub as unknown as DbApi, close: () => s.close() };
    },
    async apply(url, localId, binding = "DB") {
      const sub = approval.submissions.find((s) => s.localId === localId);
      if (!sub) throw new Error(`no submission ${localId}`);
      const res = await applyVia(client, url, sub, binding);
      approval.settled.add(sub.actionId);
      return res;
    },
    reject(localId, binding = "DB") {
      const sub = approval.submissions.find((s) => s.localId === localId);
      if (sub) approval.settled.add(sub.actionId);
      return new Promise((res, rej) =>
        client.actionRejected({ workspaceId: "ws-1", binding, actionId: sub?.actionId ?? 0, localId }, (e) =>
          e ? rej(e) : res(),
        ),
      );
    },
    async close() {
      for (const s of sessions) s.close();
      client.close();
      await gk.close();
      if (!opts.approval) approval.close();
    },
  };
  return h;
}

/** ApplyAction of a recorded submission through `client`. */
export function applyVia(
  client: GatekeeperClient,
  url: string,
  sub: { localId: string; actionId: number; payloadJson: string },
  binding = "DB",
): Promise<ApplyActionResponse> {
  return readApplyOutcome(
    client.applyAction({
      workspaceId: "ws-1",
      binding,
      url,
      trust: "byo",
      actionId: sub.actionId,
      localId: sub.localId,
      payloadJson: sub.payloadJson,
      dependencyResults: {},
    }),
  );
}

/** assert.rejects for capnweb RpcPromises (thenables, not Promises). */
export function rejects(p: PromiseLike<unknown>, re: RegExp): Promise<void> {
  return assert.rejects((async () => await p)(), re);
}

/** PrepareRevert of applied submission `sub` (its ApplyAction result `resultJson`) through `client`. */
export function prepareRevertVia(
  client: GatekeeperClient,
  url: string,
  sub: { localId: string; actionId: number; payloadJson: string },
  resultJson: string,
  binding = "DB",
): Promise<PrepareRevertResponse> {
  return callUnary<PrepareRevertRequest, PrepareRevertResponse>(client, client.prepareRevert, {
    workspaceId: "ws-1",
    binding,
    url,
    trust: "byo",
    actionId: sub.actionId,
    localId: sub.localId,
    payloadJson: sub.payloadJson,
    resultJson,
  });
}

/** CheckObserver of `observer` with `credential` ("role:password") on workspace ws-1's binding through `client`. */
export function checkObserverVia(
  client: GatekeeperClient,
  url: string,
  observer: string,
  credential: string,
  binding = "DB",
): Promise<CheckObserverResponse> {
  return callUnary<CheckObserverRequest, CheckObserverResponse>(client, client.checkObserver, {
    url,
    observer,
    credential,
    workspaceId: "ws-1",
    binding,
  });
}

/** A gatekeeper child process (kill-after-commit-child.ts) and a gRPC client of it. */
export interface KillingGatekeeper {
  child: ChildProcess;
  port: number;
  client: GatekeeperClient;
  /** Resolves when the child exited, with its exit code or the signal that ended it. */
  exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
  /** Its stdout and stderr so far. */
  output(): string;
  /** Closes the client; SIGKILLs the child if it still runs and waits until it is reaped. */
  stop(): Promise<void>;
}

const KILL_CHILD = join(import.meta.dirname, "kill-after-commit-child.ts");

/**
 * Spawns a gatekeeper-postgres process for `db` that SIGKILLs itself after an apply committed and
 * before its reply, and waits (up to `startTimeoutMs`, default 120 s: the machine may be busy) until it serves.
 * @throws Error with the child's output when it exits or does not serve in time.
 */
export async function spawnKillingGatekeeper(
  db: Db,
  approval: FakeApprovalQueue,
  startTimeoutMs = 120_000,
): Promise<KillingGatekeeper> {
  const child = spawn(process.execPath, ["--no-node-snapshot", "--import", "tsx", KILL_CHILD], {
    cwd: join(import.meta.dirname, ".."),
    env: {
      ...process.env,
      ...ENV,
      KILL_TEST_REGISTRY: JSON.stringify(shopRegistryInput(db.port)),
      APPROVAL_ADDRESS: `127.0.0.1:${approval.port}`,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  child.stdout?.on("data", (d) => {
    out += d;
  });
  child.stderr?.on("data", (d) => {
    out += d;
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((res) =>
    child.once("exit", (code, signal) => res({ code, signal })),
  );
  const running = () => child.exitCode === null && child.signalCode === null;
  const stopChild = async () => {
    if (running()) child.kill("SIGKILL");
    await exited;
  };
  let port: number;
  try {
    port = await waitUntil(
      "the gatekeeper child to serve",
      () => {
        if (!running()) throw new Error(`the gatekeeper child exited before serving: ${out}`);
        const m = /\{"port":(\d+)\}/.exec(out);
        return m ? Number(m[1]) : undefined;
      },
      { timeoutMs: startTimeoutMs },
    );
  } catch (e) {
    await stopChild();
    throw new Error(`${(e as Error).message}; output: ${out}`);
  }
  const client = new GatekeeperClient(`127.0.0.1:${port}`, credentials.createInsecure());
  return {
    child,
    port,
    client,
    exited,
    output: () => out,
    async stop() {
      client.close();
      await stopChild();
    },
  };
}
