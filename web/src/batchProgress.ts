/**
 * A batch approval followed in the inbox, as `gatehouse approve --all` follows one: its size, and
 * the outcomes counted from the live notices the app already receives (ActionApplied,
 * ActionApplyFailed, ActionRejected of its workspace, from the moment it was sent), so a long batch
 * shows "340 of 1000 final" instead of one long request. Notices name no action, so an outcome of
 * another action of the workspace decided meanwhile counts too; counts never pass the batch's size,
 * and the inbox re-reads the statuses themselves. Pure: the inbox page holds the state.
 */
import type { Action, LogNotice } from "@gatehouse/gateway-contract";

/** One workspace's batch. */
export interface BatchProgress {
  workspaceId: string;
  /** Actions approved in the batch. */
  total: number;
  applied: number;
  failed: number;
  rejected: number;
  /** The approvals are recorded (the approve request answered). */
  recorded: boolean;
}

const OUTCOME: Record<string, "applied" | "failed" | "rejected"> = {
  ActionApplied: "applied",
  ActionApplyFailed: "failed",
  ActionRejected: "rejected",
};

/** Applied, failed and rejected together. */
export function finalCount(b: BatchProgress): number {
  return b.applied + b.failed + b.rejected;
}

/** Every action of the batch is final, as far as the notices tell. */
export function isDone(b: BatchProgress): boolean {
  return b.recorded && finalCount(b) >= b.total;
}

/** A batch of `total` actions about to be sent. */
export function startBatch(workspaceId: string, total: number): BatchProgress {
  return { workspaceId, total, applied: 0, failed: 0, rejected: 0, recorded: false };
}

/** Counts `notice` when it is an outcome in the batch's workspace and the batch is not complete. */
export function countNotice(b: BatchProgress, notice: LogNotice): BatchProgress {
  const kind = OUTCOME[notice.type];
  if (!kind || notice.workspaceId !== b.workspaceId || finalCount(b) >= b.total) return b;
  return { ...b, [kind]: b[kind] + 1 };
}

/**
 * The approve request answered with `actions`: the batch is recorded, and its size is what the
 * service approved. Outcomes already in the answer (a service that answers after the applies)
 * count when they are more than the notices counted.
 */
export function answered(b: BatchProgress, actions: Action[]): BatchProgress {
  const count = (s: Action["status"]) => actions.filter((a) => a.status === s).length;
  const fromAnswer = { applied: count("applied"), failed: count("failed"), rejected: count("rejected") };
  const total = actions.length;
  const useAnswer = fromAnswer.applied + fromAnswer.failed + fromAnswer.rejected > finalCount(b);
  return { ...b, ...(useAnswer ? fromAnswer : {}), total, recorded: true };
}

/** "340 of 1000 final: 338 applied, 2 failed, 0 rejected". */
export function progressText(b: BatchProgress): string {
  const head = b.recorded ? "" : "recording the approvals… ";
  return `${head}${finalCount(b)} of ${b.total} final: ${b.applied} applied, ${b.failed} failed, ${b.rejected} rejected`;
}
