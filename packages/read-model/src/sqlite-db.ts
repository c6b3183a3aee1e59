/** The read model's tables in SQLite (better-sqlite3: synchronous, one connection). */
import Database from "better-sqlite3";
import { type Batch, entryParams, type ProjectionDb, type Row, type Statement } from "./db.ts";
import { ddl, PROJECTOR_ROW, SCHEMA_ROW, SCHEMA_VERSION, TABLES } from "./schema.ts";

/** How long a write waits for another connection's lock (the event store's appends), ms. */
const BUSY_TIMEOUT_MS = 10_000;

const UPSERT_ENTRY = `INSERT INTO gatehouse_rm_entries
  (workspace_id, log_id, kind, status, execution_id, last_revision, caller_id, entry)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (workspace_id, log_id) DO UPDATE SET kind = excluded.kind, status = excluded.status,
    execution_id = excluded.execution_id, last_revision = excluded.last_revision,
    caller_id = excluded.caller_id, entry = excluded.entry`;
const INSERT_DEPENDS = `INSERT INTO gatehouse_rm_depends (workspace_id, action_id, depends_on)
  VALUES (?, ?, ?) ON CONFLICT DO NOTHING`;
const UPSERT_WORKSPACE = `INSERT INTO gatehouse_rm_workspaces (workspace_id, revision, latched, ws_exists, rules)
  VALUES (?, ?, ?, ?, ?)
  ON CONFLICT (workspace_id) DO UPDATE SET revision = excluded.revision, latched = excluded.latched,
    ws_exists = excluded.ws_exists, rules = excluded.rules`;

/**
 * Opens the tables in the SQLite file at `path` (created when missing; it may be the event store's own
 * file, opened here by a second connection) or in a private in-memory database (":memory:").
 * A layout of another {@link SCHEMA_VERSION} is dropped and recreated (the projector rebuilds it).
 * @throws SqliteError when the file cannot be opened.
 */
export function openSqliteProjectionDb(path: string): SqliteProjectionDb {
  const db = new Database(path);
  try {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
    if (path !== ":memory:") db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.transaction(() => {
      for (const s of ddl("sqlite")) db.exec(s);
      const row = db.prepare("SELECT position FROM gatehouse_rm_checkpoint WHERE name = ?").get(SCHEMA_ROW) as
        | { position: number }
        | undefined;
      if (row && row.position !== SCHEMA_VERSION) {
        for (const t of TABLES) db.exec(`DROP TABLE ${t}`);
        for (const s of ddl("sqlite")) db.exec(s);
      }
      const put = db.prepare(
        "INSERT INTO gatehouse_rm_checkpoint (name, position) VALUES (?, ?) ON CONFLICT DO NOTHING",
      );
      put.run(SCHEMA_ROW, SCHEMA_VERSION);
      put.run(PROJECTOR_ROW, 0);
    }).immediate();
    return new SqliteProjectionDb(db);
  } catch (error) {
    db.close();
    throw error;
  }
}

/** {@link ProjectionDb} on one better-sqlite3 connection; create it with {@link openSqliteProjectionDb}. */
export class SqliteProjectionDb implements ProjectionDb {
  readonly dialect = "sqlite";
  private readonly cache = new Map<string, Database.Statement>();
  private readonly writeTx;
  private readonly readTx;
  private closed = false;

  constructor(private readonly db: Database.Database) {
    this.writeTx = db.transaction((batch: Batch, expected: number): boolean => {
      if (this.checkpointNow() !== expected) return false;
      const entry = this.stmt(UPSERT_ENTRY);
      for (const e of batch.entries) entry.run(...entryParams(e));
      const dep = this.stmt(INSERT_DEPENDS);
      for (const d of batch.depends) dep.run(d.workspaceId, d.actionId, d.dependsOn);
      const ws = this.stmt(UPSERT_WORKSPACE);
      for (const w of batch.workspaces)
        ws.run(w.workspaceId, w.revision, w.latched ? 1 : 0, w.exists ? 1 : 0, Buffer.from(w.rules));
      this.stmt("UPDATE gatehouse_rm_checkpoint SET position = ? WHERE name = ?").run(
        batch.position,
        PROJECTOR_ROW,
      );
      return true;
    });
    this.readTx = db.transaction((statements: Statement[]): Row[][] =>
      statements.map((s) => this.stmt(s.sql).all(...s.params) as Row[]),
    );
  }

  async checkpoint(): Promise<number> {
    return this.checkpointNow();
  }

  async workspaceRevisions(): Promise<Map<string, number>> {
    const rows = this.stmt("SELECT workspace_id, revision FROM gatehouse_rm_workspaces").all() as {
      workspace_id: string;
      revision: number;
    }[];
    return new Map(rows.map((r) => [r.workspace_id, Number(r.revision)]));
  }

  async writeBatch(batch: Batch, expected: number): Promise<boolean> {
    return this.writeTx.immediate(batch, expected);
  }

  async reset(): Promise<void> {
    this.db
      .transaction(() => {
        for (const t of TABLES) if (t !== "gatehouse_rm_checkpoint") this.db.exec(`DELETE FROM ${t}`);
        this.stmt("UPDATE gatehouse_rm_checkpoint SET position = 0 WHERE name = ?").run(PROJECTOR_ROW);
      })
      .immediate();
  }

  async read(statements: Statement[]): Promise<Row[][]> {
    return this.readTx.deferred(statements);
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.db.close();
  }

  private checkpointNow(): number {
    const row = this.stmt("SELECT position FROM gatehouse_rm_checkpoint WHERE name = ?").get(PROJECTOR_ROW) as
      | { position: number }
      | undefined;
    return row ? Number(row.position) : 0;
  }

  private stmt(sql: string): Database.Statement {
    let s = this.cache.get(sql);
    if (!s) {
      s = this.db.prepare(sql);
      this.cache.set(sql, s);
    }
    return s;
  }
}
