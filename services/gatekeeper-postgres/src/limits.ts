/** Page sizes and byte budgets of the PostgreSQL gatekeeper. */
import { DEFAULT_MAX_FRAME_BYTES } from "@gatehouse/gatekeeper-kit";

/** Limits of a binding. */
export interface Limits {
  /** Most rows in one `query` page. */
  maxRows: number;
  /**
   * The sandbox runners' frame cap (their SANDBOX_MAX_FRAME_BYTES), bytes: a page stops adding rows
   * before its reply would outgrow one frame, and a single row larger than that is refused.
   */
  maxFrameBytes: number;
  /** Longest statement text `query` / `execute` accept, bytes. */
  maxSqlBytes: number;
  /** Most bound parameters of one statement. */
  maxParams: number;
  /** Most changed rows shown before/after in an approver description; past it the description is incomplete. */
  maxDescribedRows: number;
  /** Byte budget of the before/after block of a description. */
  maxDescribedBytes: number;
  /** Most pending writes of one binding (each is replayed before every read). */
  maxPendingWrites: number;
  /** Most rows one write may change (before-images are kept for revert). */
  maxChangedRows: number;
}

export const DEFAULT_LIMITS: Limits = {
  maxRows: 500,
  maxFrameBytes: DEFAULT_MAX_FRAME_BYTES,
  maxSqlBytes: 64 * 1024,
  maxParams: 1000,
  maxDescribedRows: 20,
  maxDescribedBytes: 32 * 1024,
  maxPendingWrites: 1000,
  maxChangedRows: 10_000,
};
