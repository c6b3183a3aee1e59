/**
 * The projection tables, the same for SQLite and PostgreSQL (only the blob type differs). All are
 * derived from the workspace streams, so a schema change drops and recreates them (the projector then
 * rebuilds from position 0): see {@link SCHEMA_VERSION}.
 */

/**
 * Version of the table layout below; stored as the `schema_version` row of the checkpoint table.
 * Also bumped when what an entry row holds changes, so old rows are rebuilt: 2 = action entries
 * carry their description digest and who withdrew an approval.
 */
export const SCHEMA_VERSION = 2;

/** Name of the projector's row in `gatehouse_rm_checkpoint`. */
export const PROJECTOR_ROW = "projector";

/** Name of the layout version's row in `gatehouse_rm_checkpoint`. */
export const SCHEMA_ROW = "schema_version";

/** Every table, children first (the order they are dropped in). */
export const TABLES = [
  "gatehouse_rm_depends",
  "gatehouse_rm_entries",
  "gatehouse_rm_workspaces",
  "gatehouse_rm_checkpoint",
] as const;

/**
 * The DDL statements for a dialect, idempotent (IF NOT EXISTS).
 * - entries: one row per log entry; `entry` = `LogEntry.encode(entry)`; status = ActionStatus (actions only);
 *   caller_id = "<kind>:<id>" of the caller ("" when none).
 * - depends: the edges action_id → depends_on (for dependents and undecided dependencies).
 * - workspaces: revision (last folded event), latched 0/1, ws_exists 0/1 (WorkspaceCreated folded),
 *   rules = `LogView.encode({workspaceId, rules})` (no entries): the workspace id as folded and the
 *   enabled rules in LogView order.
 * - checkpoint: name → position (`projector`: global position of the last event whose rows are stored).
 */
export function ddl(dialect: "sqlite" | "postgres"): string[] {
  const blob = dialect === "sqlite" ? "BLOB" : "BYTEA";
  return [
    `CREATE TABLE IF NOT EXISTS gatehouse_rm_entries (
      workspace_id TEXT NOT NULL,
      log_id BIGINT NOT NULL,
      kind TEXT NOT NULL,
      status INTEGER,
      execution_id TEXT NOT NULL,
      last_revision BIGINT NOT NULL,
      caller_id TEXT NOT NULL,
      entry ${blob} NOT NULL,
      PRIMARY KEY (workspace_id, log_id)
    )`,
    `CREATE INDEX IF NOT EXISTS gatehouse_rm_entries_pending
      ON gatehouse_rm_entries (workspace_id, status, log_id) WHERE kind = 'action'`,
    `CREATE INDEX IF NOT EXISTS gatehouse_rm_entries_recent
      ON gatehouse_rm_entries (workspace_id, last_revision DESC, log_id DESC) WHERE kind = 'action'`,
    `CREATE INDEX IF NOT EXISTS gatehouse_rm_entries_execution
      ON gatehouse_rm_entries (workspace_id, execution_id, log_id) WHERE kind = 'observation'`,
    `CREATE TABLE IF NOT EXISTS gatehouse_rm_depends (
      workspace_id TEXT NOT NULL,
      action_id BIGINT NOT NULL,
      depends_on BIGINT NOT NULL,
      PRIMARY KEY (workspace_id, action_id, depends_on)
    )`,
    `CREATE INDEX IF NOT EXISTS gatehouse_rm_depends_dependents
      ON gatehouse_rm_depends (workspace_id, depends_on, action_id)`,
    `CREATE TABLE IF NOT EXISTS gatehouse_rm_workspaces (
      workspace_id TEXT PRIMARY KEY,
      revision BIGINT NOT NULL,
      latched INTEGER NOT NULL,
      ws_exists INTEGER NOT NULL,
      rules ${blob} NOT NULL
    )`,
    `CREATE TABLE IF NOT EXISTS gatehouse_rm_checkpoint (
      name TEXT PRIMARY KEY,
      position BIGINT NOT NULL
    )`,
  ];
}
