/**
 * The database side of `npm run bench:postgres`: the `bench` database's roles, schema and rows, the
 * read every side runs, the pending writes, and the baselines that talk to PostgreSQL without
 * Gatehouse (the `pg` driver, `psql -c`).
 */
import { execFile } from "node:child_process";
import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { promisify } from "node:util";
import type { PostgresServer } from "@gatehouse/event-store/postgres-server";
import pg from "pg";
import { timed } from "./support.ts";

const run = promisify(execFile);

/** The read every side runs (unqualified: the binding's scope is `#schema=shop`). */
export const READ_SQL = "SELECT id, name, price, stock FROM items WHERE id = $1";
/** The i-th id read: spread over the table, the same sequence on every side. */
export const idOf = (i: number, rows: number) => 1 + ((i * 7919) % rows);
export const READ_PW = "bench-read-pw";
export const WRITE_PW = "bench-write-pw";

/** Roles, schema and rows of the `bench` database (run as the superuser). */
export function benchSql(rows: number): string {
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
export function pendingWrite(i: number, rows: number): { sql: string; params: (string | number)[] } {
  return i % 2 === 0
    ? { sql: "UPDATE items SET stock = stock + 1 WHERE id = $1", params: [idOf(i, rows)] }
    : {
        sql: "INSERT INTO items (id, name, price, stock) VALUES ($1, $2, $3, $4)",
        params: [rows + 1 + i, `pending ${i}`, 9.99, 1],
      };
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

/** The driver side's calls, each one timed sample: a connected client per role on the bench database. */
export interface Driver {
  /** The read alone, as one statement. */
  plain(i: number): Promise<void>;
  /** The read in the transaction the gatekeeper wraps around it (no pending writes). */
  tx(i: number): Promise<void>;
  /** The same transaction as the write role with `pending` writes replayed under savepoints first. */
  replay(i: number): Promise<void>;
  close(): Promise<void>;
}

/** Connects the driver's clients (read role and write role). */
export async function connectDriver(server: PostgresServer, pending: number, rows: number): Promise<Driver> {
  const url = (user: string, pw: string) =>
    server.url.replace(/\/\/[^@]+@/, `//${user}:${pw}@`).replace(/\/gatehouse$/, "/bench");
  const reader = new pg.Client({ connectionString: url("bench_read", READ_PW) });
  const writer = new pg.Client({ connectionString: url("bench_write", WRITE_PW) });
  await reader.connect();
  await writer.connect();
  await reader.query("SET search_path = shop");
  const read = async (c: pg.Client, i: number) => {
    const r = await c.query(READ_SQL, [idOf(i, rows)]);
    if (r.rows.length !== 1) throw new Error(`the driver read ${r.rows.length} rows of id ${idOf(i, rows)}`);
  };
  /** BEGIN, settings, the replayed writes each under a savepoint, the read, ROLLBACK. */
  const inTx = async (c: pg.Client, i: number, writes: number) => {
    await c.query(writes > 0 ? "BEGIN" : "BEGIN READ ONLY");
    await c.query("SELECT set_config('statement_timeout', $1, true), set_config('search_path', $2, true)", [
      "5000",
      "shop",
    ]);
    for (let w = 0; w < writes; w++) {
      const { sql, params } = pendingWrite(w, rows);
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
export async function psqlSamples(
  server: PostgresServer,
  runs: number,
  rows: number,
): Promise<number[] | undefined> {
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
    READ_SQL.replace("FROM items", "FROM shop.items").replace("$1", String(idOf(i, rows))),
  ];
  return timed(runs, 1, async (i) => {
    const { stdout } = await run("psql", args(i), {
      env: { ...process.env, PGPASSWORD: READ_PW },
      timeout: 60_000,
    });
    if (!stdout.trim()) throw new Error(`psql printed nothing for id ${idOf(i, rows)}`);
  });
}
