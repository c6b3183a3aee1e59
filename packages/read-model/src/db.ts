/** The port between the projector/queries and a SQL backend (SQLite or PostgreSQL). */

/** One log entry's row (see schema.ts). */
export interface EntryRow {
  workspaceId: string;
  logId: number;
  kind: "action" | "observation" | "refusal";
  /** ActionStatus for actions, null otherwise. */
  status: number | null;
  executionId: string;
  lastRevision: number;
  /** "<kind>:<id>" of the caller, "" when none. */
  callerId: string;
  /** `LogEntry.encode(entry).finish()`. */
  entry: Uint8Array;
}

/**
 * The parameters of one entry row in the column order of gatehouse_rm_entries (workspace_id, log_id,
 * kind, status, execution_id, last_revision, caller_id, entry), as both backends insert them.
 */
export function entryParams(e: EntryRow): unknown[] {
  return [
    e.workspaceId,
    e.logId,
    e.kind,
    e.status,
    e.executionId,
    e.lastRevision,
    e.callerId,
    Buffer.from(e.entry),
  ];
}

/** One workspace's row (see schema.ts). */
export interface WorkspaceRow {
  workspaceId: string;
  revision: number;
  latched: boolean;
  exists: boolean;
  /** `LogView.encode({workspaceId, rules})`: the folded workspace id and the enabled rules. */
  rules: Uint8Array;
}

/** What one projector transaction writes: rows upserted, edges inserted, then the checkpoint. */
export interface Batch {
  entries: EntryRow[];
  depends: { workspaceId: string; actionId: number; dependsOn: number }[];
  workspaces: WorkspaceRow[];
  /** Global position of the batch's last event: the new checkpoint. */
  position: number;
}

/** A read statement: SQL with `?` placeholders (no `?` elsewhere in the text) and its parameters. */
export interface Statement {
  sql: string;
  params: unknown[];
}

/** A result row; BIGINT columns may come back as strings (PostgreSQL): read them with Number(). */
export type Row = Record<string, unknown>;

/** The SQL side of the read model. Every method may throw StoreUnavailable when the server went away. */
export interface ProjectionDb {
  readonly dialect: "sqlite" | "postgres";
  /** The stored checkpoint (0 = none). */
  checkpoint(): Promise<number>;
  /** Stored revision per workspace (the projector's guard against writing an event twice). */
  workspaceRevisions(): Promise<Map<string, number>>;
  /**
   * Writes the batch and sets the checkpoint to `batch.position`, in one transaction, if the stored
   * checkpoint still equals `expected` (a fence against a second writer or a rebuild).
   * @returns false (nothing written) when the stored checkpoint differs from `expected`.
   */
  writeBatch(batch: Batch, expected: number): Promise<boolean>;
  /** Deletes every row and sets the checkpoint to 0, in one transaction. */
  reset(): Promise<void>;
  /** Runs the statements in one consistent read (one snapshot); results in statement order. */
  read(statements: Statement[]): Promise<Row[][]>;
  /** Closes the connections. */
  close(): Promise<void>;
}
