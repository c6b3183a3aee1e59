/**
 * The activities the lifecycle workflows call, as types only (workflow code imports nothing with
 * side effects). `src/activities/` implements them; every append they make goes through the
 * approval domain's `decide` with an expected revision, so the workspace stream stays the truth.
 */
import type { FinalStatus } from "@gatehouse/approval-core/lifecycle-contract";

/** An action's status as folded from the workspace stream. */
export type StreamStatus = "pending" | "approved" | "applying" | "applied" | "failed" | "rejected";

/** What the workflow needs to know about its action, read from the stream. */
export interface ActionSnapshot {
  actionId: number;
  status: StreamStatus;
  /** "user:<id>", "rule:<binding>/<tag>", "system:expiry" or "service:approval" (cascade); "" while pending. */
  decidedBy: string;
  /** Rejection reason or failure message; "" otherwise. */
  reason: string;
  /** The dependency whose rejection/failure cascaded to this action; 0 when none. */
  cascadedFrom: number;
  outcomeUnknown: boolean;
  /** The gatekeeper's result JSON once applied; "" otherwise. */
  resultJson: string;
  /** Submission time, milliseconds since the epoch (the expiry TTL counts from here). */
  submittedAtMs: number;
  /** True when the action's delivery is AWAIT: its turn workflow is told the outcome. */
  awaited: boolean;
  /** The execution that submitted the action (the turn id when awaited). */
  executionId: string;
  /** Pending actions (transitively) rejected by this action's rejection/failure, in id order. */
  cascaded: number[];
}

/** Addresses one action. */
export interface ActionRef {
  workspaceId: string;
  actionId: number;
}

/** The result of a decision append: recorded, or refused by the domain (nothing appended). */
export type DecisionResult =
  | { recorded: true; snapshot: ActionSnapshot }
  | { recorded: false; message: string; snapshot: ActionSnapshot };

/** What the apply step learned; the outcome activity records it. */
export type ApplyResult =
  | { kind: "applied"; resultJson: string }
  | { kind: "failed"; message: string; outcomeUnknown: boolean };

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
  /** Reads the action from the stream. @throws non-retryable when the workspace or action does not exist. */
  readAction(ref: ActionRef): Promise<ActionSnapshot>;
  /** Appends ActionApproved for this action alone (no dependencies); idempotent for the same approver. */
  recordApproval(ref: ActionRef & { decidedBy: string }): Promise<DecisionResult>;
  /** Appends ActionRejected with its cascade; idempotent for the same decider and reason. */
  recordRejection(ref: ActionRef & { decidedBy: string; reason: string }): Promise<DecisionResult>;
  /**
   * At most once: checks the gatekeeper is reachable (retryable error if not), appends the claim,
   * calls ApplyAction. A retried attempt that finds an unmatched claim returns outcome unknown and
   * never calls the gatekeeper again.
   */
  applyAction(ref: ActionRef): Promise<ApplyResult>;
  /** Appends ActionApplied or ActionApplyFailed (with the cascade); idempotent. */
  recordOutcome(ref: ActionRef & { result: ApplyResult }): Promise<ActionSnapshot>;
  /** Best effort: tells the gatekeepers these actions were rejected; never fails. */
  notifyRejected(input: { workspaceId: string; actionIds: number[] }): Promise<void>;
  /** Signals-with-start the turn workflow of `turnId` with this action's final status. */
  signalTurn(input: { workspaceId: string; turnId: string; result: TurnResult }): Promise<void>;
  /** Appends TurnResumed or TurnCompleted unless the turn already ended; idempotent. */
  recordTurnOutcome(outcome: TurnOutcome): Promise<void>;
}

/** Local activity: observes a workflow's end-to-end latency in the worker's metrics. */
export interface LifecycleLocalActivities {
  observeWorkflowEnd(input: { workflow: string; outcome: string; startedAtMs: number }): Promise<void>;
}
