/**
 * The activities the lifecycle workflows call, as types only (workflow code imports nothing with
 * side effects). `src/activities/` implements them; every append they make goes through the
 * approval domain's `decide` with an expected revision, so the workspace stream stays the truth.
 */
import type { FinalStatus } from "@gatehouse/approval-core/lifecycle-contract";

/** Addresses one binding's run: `runKey` names this claim (`<workflowId>/<runId>/run-<n>`). */
export interface RunRef {
  workspaceId: string;
  binding: string;
  /** Most actions to claim (≥ 1). */
  runMax: number;
  /** Unique per run of the workflow; each activity attempt claims as `<runKey>/attempt-<n>`. */
  runKey: string;
}

/** What one run did. */
export interface RunReport {
  /** Actions claimed by this run (0: nothing was claimable; the workflow waits for a wake). */
  claimed: number;
  /** True when more may be claimable right after this run (the workflow claims again at once); with `claimed` 0 it means the claim only cascaded dead approved actions. */
  more: boolean;
  /** Actions that became final in this run and must be announced (awaited or rejected), in order (each outcome before the rejections it cascaded). */
  announce: number[];
  /** Other bindings of the workspace with approved actions waiting on an action applied here. */
  wake: string[];
}

/** A turn's end as recorded in the stream. */
export interface TurnOutcome {
  workspaceId: string;
  turnId: string;
  state: "resumed" | "completed";
  reason: string;
  results: TurnResult[];
}

/** One awaited action's final status, as the turn events carry it. */
export interface TurnResult {
  actionId: number;
  status: FinalStatus;
  reason?: string;
  resultJson?: string;
}

/** Activities of the lifecycle worker (see src/activities/). */
export interface LifecycleActivities {
  /**
   * One run of a binding, at most once per action: first ends claims left without an outcome by an
   * earlier attempt or run ("outcome unknown", never sent again); checks the gatekeeper accepts
   * connections (retryable error, nothing claimed, if not); claims the next run in one append;
   * calls Gatekeeper.ApplyActions, heartbeating; appends outcomes in batches; hands back the claims
   * of actions the gatekeeper never started (ActionClaimReleased).
   */
  applyNextRun(ref: RunRef): Promise<RunReport>;
  /**
   * Tells each final action's awaiting turn (in the order given), then notifies the gatekeepers of
   * the rejected ones (best effort). Safe to repeat.
   */
  announce(input: { workspaceId: string; actionIds: number[] }): Promise<void>;
  /** Signals-with-start the binding runs of `bindings` (a dependency of theirs was applied). */
  wakeBindings(input: { workspaceId: string; bindings: string[] }): Promise<void>;
  /** Appends TurnResumed or TurnCompleted unless the turn already ended; idempotent. */
  recordTurnOutcome(outcome: TurnOutcome): Promise<void>;
}

/** Local activity: observes a workflow's end-to-end latency in the worker's metrics. */
export interface LifecycleLocalActivities {
  observeWorkflowEnd(input: { workflow: string; outcome: string; startedAtMs: number }): Promise<void>;
}
