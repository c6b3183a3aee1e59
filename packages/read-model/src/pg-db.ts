/** The read model's tables in PostgreSQL (node-postgres pool). */
import { redactUrl, StoreUnavailable } from "@gatehouse/event-store";
import pg from "pg";
import { type Batch, entryParams, type ProjectionDb, type Row, type Statement } from "./db.ts";
import { mapPgError } from "./pg-errors.ts";
import { ddl, PROJECTOR_ROW, SCHEMA_ROW, SCHEMA_VERSION, TABLES } from "./schema.ts";

/** Advisory lock key serializing table creation across replicas (pg_advisory_xact_lock). */
const DDL_LOCK_KEY = 7_420_117_001;

/** Rows per multi-row INSERT (8 parameters each, far below the 65 535 parameter limit). */
const CHUNK = 1000;

/** `?` placeholders → `$1, $2, …`. */
function numbered(sql: string): string {
  let n = 0;
  return sql.replace(/\?/g, () => `$${++n}`);
}

/**
 * Opens the tables in the PostgreSQL database at `url`, creating them when missing (CREATE … IF NOT
 * EXISTS under an advisory lock, not `gatehouse store migrate`: the tables are derived data). A layout
 * of another {@link SCHEMA_VERSION} is dropped and recreated (the projector then rebuilds it).
 * @throws StoreUnavailable naming the URL (password redacted) when the server cannot be reached.
 */
export async function openPgProjectionDb(
  url: string,
  options: { connectTimeoutMs?: number } = {},
): Promise<PgProjectionDb> {
  const pool = new pg.Pool({
    connectionString: url,
    max: 4,
    connectionTimeoutMillis: options.connectTimeoutMs ?? 5000,
  });
  // An idle connection the server closes emits here; without a listener it would crash the process.
  pool.on("error", () => {});
  const db = new PgProjectionDb(pool, url);
  try {
    await db.transaction(async (c) => {
      await c.query("SELECT pg_advisory_xact_lock($1)", [DDL_LOCK_KEY]);
      for (const s of ddl("postgres")) await c.query(s);
      const r = await c.query<{ position: string }>(
        "SELECT position FROM gatehouse_rm_checkpoint WHERE name = $1",
        [SCHEMA_ROW],
      );
      if (r.rows[0] && Number(r.rows[0].position) !== SCHEMA_VERSION) {
        for (const t of TABLES) await c.query(`DROP TABLE ${t}`);
        for (const s of ddl("postgres")) await c.query(s);
      }
      const put =
        "INSERT INTO gatehouse_rm_checkpoint (name, position) VALUES ($1, $2) ON CONFLICT DO NOTHING";
      await c.query(put, [SCHEMA_ROW, SCHEMA_VERSION]);
      await c.query(put, [PROJECTOR_ROW, 0]);
    });
  } catch (error) {
    await pool.end().catch(() => {});
    if (error instanceof StoreUnavailable)
      throw new StoreUnavailable(`cannot open the read model at ${redactUrl(url)}: ${error.message}`);
    throw error;
  }
  return db;
}

/** {@link ProjectionDb} on a pg pool; create it with {@link openPgProjectionDb}. */
export class PgProjectionDb implements ProjectionDb {
  readonly dialect = "postgres";
  private closed = false;

  constructor(
    private readonly pool: pg.Pool,
    private readonly url: string,
  ) {}

  async checkpoint(): Promise<number> {
    const rows = await this.query("SELECT position FROM gatehouse_rm_checkpoint WHERE name = $1", [
      PROJECTOR_ROW,
    ]);
    return rows[0] ? Number(rows[0].position) : 0;
  }

  async workspaceRevisions(): Promise<Map<string, number>> {
    const rows = await this.query("SELECT workspace_id, revision FROM gatehouse_rm_workspaces");
    return new Map(rows.map((r) => [String(r.workspace_id), Number(r.revision)]));
  }

  async writeBatch(batch: Batch, expected: number): Promise<boolean> {
    return this.transaction(async (c) => {
      const r = await c.query<{ position: string }>(
        "SELECT position FROM gatehouse_rm_checkpoint WHERE name = $1 FOR UPDATE",
        [PROJECTOR_ROW],
      );
      if (Number(r.rows[0]?.position ?? 0) !== expected) return false;
      for (let i = 0; i < batch.entries.length; i += CHUNK) {
        const part = batch.entries.slice(i, i + CHUNK);
        await c.query(
          `INSERT INTO gatehouse_rm_entries
             (workspace_id, log_id, kind, status, execution_id, last_revision, caller_id, entry)
           VALUES ${values(part.length, 8)}
           ON CONFLICT (workspace_id, log_id) DO UPDATE SET kind = excluded.kind, status = excluded.status,
             execution_id = excluded.execution_id, last_revision = excluded.last_revision,
             caller_id = excluded.caller_id, entry = excluded.entry`,
          part.flatMap(entryParams),
        );
      }
      for (let i = 0; i < batch.depends.length; i += CHUNK) {
        const part = batch.depends.slice(i, i + CHUNK);
        await c.query(
          `INSERT INTO gatehouse_rm_depends (workspace_id, action_id, depends_on) VALUES ${values(part.length, 3)}
           ON CONFLICT DO NOTHING`,
          part.flatMap((d) => [d.workspaceId, d.actionId, d.dependsOn]),
        );
      }
      for (let i = 0; i < batch.workspaces.length; i += CHUNK) {
        const part = batch.workspaces.slice(i, i + CHUNK);
        await c.query(
          `INSERT INTO gatehouse_rm_workspaces (workspace_id, revision, latched, ws_exists, rules)
           VALUES ${values(part.length, 5)}
           ON CONFLICT (workspace_id) DO UPDATE SET revision = excluded.revision, latched = excluded.latched,
             ws_exists = excluded.ws_exists, rules = excluded.rules`,
          part.flatMap((w) => [
            w.workspaceId,
            w.revision,
            w.latched ? 1 : 0,
            w.exists ? 1 : 0,
            Buffer.from(w.rules),
          ]),
        );
      }
      await c.query("UPDATE gatehouse_rm_checkpoint SET position = $1 WHERE name = $2", [
        batch.position,
        PROJECTOR_ROW,
      ]);
      return true;
    });
  }

  async reset(): Promise<void> {
    await this.transaction(async (c) => {
      await c.query("SELECT position FROM gatehouse_rm_checkpoint WHERE name = $1 FOR UPDATE", [
        PROJECTOR_ROW,
      ]);
      await c.query("TRUNCATE gatehouse_rm_depends, gatehouse_rm_entries, gatehouse_rm_workspaces");
      await c.query("UPDATE gatehouse_rm_checkpoint SET position = 0 WHERE name = $1", [PROJECTOR_ROW]);
    });
  }

  async read(statements: Statement[]): Promise<Row[][]> {
    return this.withClient(async (c) => {
      await c.query("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY");
      try {
        const out: Row[][] = [];
        for (const s of statements) out.push((await c.query(numbered(s.sql), s.params)).rows as Row[]);
        await c.query("COMMIT");
        return out;
      } catch (error) {
        await c.query("ROLLBACK").catch(() => {});
        throw error;
      }
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.pool.end();
  }

  /** Runs `body` in a READ COMMITTED transaction on a pooled connection (ROLLBACK on error). */
  async transaction<T>(body: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    return this.withClient(async (c) => {
      await c.query("BEGIN");
      try {
        const result = await body(c);
        await c.query("COMMIT");
        return result;
      } catch (error) {
        await c.query("ROLLBACK").catch(() => {});
        throw error;
      }
    });
  }

  private async query(text: string, params: unknown[] = []): Promise<Row[]> {
    return this.withClient(async (c) => (await c.query(text, params)).rows as Row[]);
  }

  /** Runs `body` on a pooled connection; connection failures become StoreUnavailable naming the URL. */
  private async withClient<T>(body: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    let client: pg.PoolClient;
    try {
      client = await this.pool.connect();
    } catch (error) {
      throw mapPgError(error, this.url);
    }
    let broken: Error | undefined;
    const ignore = () => {};
    client.on("error", ignore);
    try {
      return await body(client);
    } catch (error) {
      const mapped = mapPgError(error, this.url);
      if (mapped !== error) broken = error as Error;
      throw mapped;
    } finally {
      client.off("error", ignore);
      client.release(broken);
    }
  }
}

/** `($1, $2, …), (…)` for `rows` rows of `cols` parameters. */
function values(rows: number, cols: number): string {
  const out: string[] = [];
  for (let r = 0; r < rows; r++) {
    const p: string[] = [];
    for (let c = 1; c <= cols; c++) p.push(`$${r * cols + c}`);
    out.push(`(${p.join(", ")})`);
  }
  return out.join(", ");
}
