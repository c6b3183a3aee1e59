import Database from "better-sqlite3";

/** Options for opening the SQLite file. */
export interface OpenDatabaseOptions {
  /** How long a writer waits for another connection's lock before failing with SQLITE_BUSY, in ms. */
  busyTimeoutMs: number;
}

/** Row shape of the `events` table. `data`/`metadata` are JSON text. */
export interface EventRow {
  global_position: number;
  stream_id: string;
  revision: number;
  type: string;
  data: string;
  metadata: string;
}

const DDL = `
CREATE TABLE IF NOT EXISTS events (
  global_position INTEGER PRIMARY KEY AUTOINCREMENT,
  stream_id TEXT NOT NULL,
  revision INTEGER NOT NULL,
  type TEXT NOT NULL,
  data TEXT NOT NULL,
  metadata TEXT NOT NULL,
  UNIQUE (stream_id, revision)
);
CREATE INDEX IF NOT EXISTS events_stream_heads ON events (global_position) WHERE revision = 0;
-- A retried append (same event ids) is found by its ids: see retry.ts.
CREATE INDEX IF NOT EXISTS events_event_ids ON events (stream_id, json_extract(metadata, '$.eventId'));
`;

/**
 * Opens (creating when missing) an event-store database: WAL journal (file databases), busy_timeout,
 * synchronous=NORMAL (durable across process crashes; the last commits may be lost on power loss),
 * and the `events` table.
 * @throws SqliteError when the file cannot be opened or is not a database.
 */
export function openDatabase(path: string, options: OpenDatabaseOptions): Database.Database {
  const db = new Database(path);
  try {
    db.pragma(`busy_timeout = ${Math.trunc(options.busyTimeoutMs)}`);
    if (path !== ":memory:") db.pragma("journal_mode = WAL");
    db.pragma("synchronous = NORMAL");
    db.exec(DDL);
    return db;
  } catch (error) {
    db.close();
    throw error;
  }
}
