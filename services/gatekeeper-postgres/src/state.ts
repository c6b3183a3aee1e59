/**
 * Per-binding simulation state shared by sessions, ApplyAction and ActionRejected: the ordered
 * pending writes (the kit's PendingOverlay), provisional ids, the tables the workspace read (for
 * CheckObserver), and the write queue that builds writes one at a time in call order.
 */
import { PendingOverlay, ProvisionalIds } from "@gatehouse/gatekeeper-kit";
import type { QualifiedTable } from "./resource-url.ts";
import type { StatementKind } from "./statement-scope.ts";

/** A bound parameter: what `$1`, `$2`, … take (objects and arrays are refused; pass JSON as a string). */
export type SqlParam = string | number | boolean | null;

/** What a write action carries (payload_json): enough to apply it without session state. */
export interface WritePayload {
  kind: "write";
  sql: string;
  params: SqlParam[];
  statementKind: StatementKind;
  /** The changed table (INSERT/UPDATE/DELETE; absent for DDL). */
  target?: QualifiedTable;
  /** Rows the statement changed in the simulation the approver saw (-1: not counted, DDL). */
  expectedRowCount: number;
}

/** One changed row: PostgreSQL's jsonb text of the whole row before and after (null: absent). */
export interface RowImage {
  before: string | null;
  after: string | null;
}

/** What a revert action carries: the rows to restore and what they must still hold. */
export interface RevertPayload {
  kind: "revert";
  /** The applied action this reverts. */
  revertsAction: number;
  target: QualifiedTable;
  /** Primary-key columns of `target`, in key order. */
  primaryKey: string[];
  /** Each row as the applied write left it (`after`) and as it is to be restored (`before`). */
  rows: RowImage[];
}

export type StagedPayload = WritePayload | RevertPayload;

/**
 * What an applied action's result_json holds (apply.ts writes it in the marker row and the reply;
 * revert.ts reads it to stage the inverse).
 */
export interface AppliedResult {
  /** Rows the statement changed (PostgreSQL's command count). */
  rowCount: number;
  /** Row images for a revert; absent when they were not all captured or did not fit. */
  images?: { primaryKey: string[]; rows: RowImage[] };
  /** Why `images` is absent. */
  notRevertable?: string;
}

/** A pending write in the overlay. */
export interface PendingSqlWrite extends WritePayload {
  localId: string;
}

/** Simulation state of one binding. */
export interface BindingState {
  overlay: PendingOverlay<PendingSqlWrite>;
  ids: ProvisionalIds;
  /** Provisional id → why it is no longer pending (rejected, failed, or dropped with one). */
  settled: Map<string, string>;
  /** `schema.table` of every table a read of this binding returned rows of, in this process. */
  readTables: Set<string>;
  /** Tail of the binding's write queue. */
  queue: Promise<unknown>;
  /** Set once the overlay was rebuilt from the approval service (restore.ts). */
  restored?: Promise<void> | undefined;
}

/** Drops `localId` and every pending write built on it. @returns the dropped ids in submission order. */
export function dropWrite(state: BindingState, localId: string, why: string): string[] {
  const dropped = state.overlay.drop(localId);
  for (const id of dropped) {
    state.settled.set(
      id,
      id === localId ? why : `was dropped because ${localId}, which it was built on, ${why}`,
    );
  }
  return dropped;
}

/** Runs `fn` after the binding's earlier queued writes (so each write sees every earlier pending one). */
export function inOrder<T>(state: BindingState, fn: () => Promise<T>): Promise<T> {
  const next = state.queue.then(fn, fn);
  state.queue = next.catch(() => undefined);
  return next;
}

/** Every binding's state, for one gatekeeper process. */
export class PostgresState {
  readonly #bindings = new Map<string, BindingState>();

  /** The state of (workspace, binding), created on first use. */
  binding(workspaceId: string, binding: string): BindingState {
    const key = `${workspaceId}\u0000${binding}`;
    let s = this.#bindings.get(key);
    if (!s) {
      s = {
        overlay: new PendingOverlay<PendingSqlWrite>(),
        ids: new ProvisionalIds(),
        settled: new Map(),
        readTables: new Set(),
        queue: Promise.resolve(),
      };
      this.#bindings.set(key, s);
    }
    return s;
  }

  /** The state of (workspace, binding) if it exists (never creates one). */
  peek(workspaceId: string, binding: string): BindingState | undefined {
    return this.#bindings.get(`${workspaceId}\u0000${binding}`);
  }
}
