/**
 * The contract between the approval service (a Temporal client) and the lifecycle worker:
 * task queue, workflow ids, inputs, and the update/signal/query definitions (DESIGN.md
 * "Orchestration"). This module imports only `@temporalio/workflow` definitions, so workflow code
 * may import it (subpath `@gatehouse/approval-core/lifecycle-contract`).
 *
 * Invariants:
 * - One action workflow per (workspace, action): id `action/<workspaceId>/<actionId>`; starting it
 *   again is a no-op (the client uses the "use existing" conflict policy).
 * - The workflow is the engine, the stream is the truth: every transition the workflow makes is an
 *   event appended (with expected revision) by one of its activities; queries never replace reads
 *   of the projection.
 * - A decision is taken once: the first approve/reject/expiry/cascade wins; a later decision update
 *   is refused by the update validator with "action N was already <decided> by <who>".
 * - Apply is at most once: after the claim (ActionApplying) the gatekeeper is called once and never
 *   again. The worker waits for the outcome as long as the gatekeeper reports the call running (the
 *   ApplyAction stream's `running` messages), up to GATEKEEPER_APPLY_MAX for that gatekeeper kind.
 *   `outcomeUnknown` means the call was lost (worker or gatekeeper died, connection dropped,
 *   gatekeeper fell silent) or was still running at that maximum — never a call that was running.
 */
import { defineQuery, defineSignal, defineUpdate } from "@temporalio/workflow";

/** Task queue of the lifecycle worker. */
export const LIFECYCLE_TASK_QUEUE = "gatehouse-lifecycle";

/** Default action time-to-live before expiry: 7 days, in milliseconds. */
export const DEFAULT_ACTION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** Workflow id of an action's lifecycle. */
export function actionWorkflowId(workspaceId: string, actionId: number): string {
  return `action/${workspaceId}/${actionId}`;
}

/** Workflow id of an await-decision turn (the turn id is the execution id that suspended). */
export function turnWorkflowId(workspaceId: string, turnId: string): string {
  return `turn/${workspaceId}/${turnId}`;
}

/** Workflow type names (registered by the worker). */
export const ACTION_WORKFLOW = "actionLifecycle";
export const TURN_WORKFLOW = "awaitDecisionTurn";

/** Input of the action lifecycle workflow. */
export interface ActionWorkflowInput {
  workspaceId: string;
  actionId: number;
  /** Pending time-to-live in milliseconds; on expiry the action is rejected with reason "expired". */
  ttlMs: number;
}

/** A person's (or a rule's) decision. `decidedBy` is "user:<id>" or "rule:<binding>/<tag>". */
export type Decision =
  | { kind: "approve"; decidedBy: string }
  | { kind: "reject"; decidedBy: string; reason: string };

/** Final status of an action as the workflow ends it. */
export type FinalStatus = "applied" | "failed" | "rejected";

/** What a decision update returns once the action reached a final status. */
export interface DecisionOutcome {
  actionId: number;
  status: FinalStatus;
  /** Rejection reason or failure message. */
  reason?: string;
  /** True when the apply's outcome is unknown (see the invariant above); `reason` says why. */
  outcomeUnknown?: boolean;
  /** Actions rejected by the cascade this outcome caused (transitively), in id order. */
  cascaded: number[];
}

/** Decide and wait for the final outcome (returned to the approver). */
export const decideUpdate = defineUpdate<DecisionOutcome, [Decision]>("decide");
/** Decide without waiting (used when no worker is polling, so the decision is stored durably). */
export const decideSignal = defineSignal<[Decision]>("decideQueued");
/**
 * Sent by the workflow of a dependency that was rejected or failed: this action was cascaded. With
 * `cascadedFrom` 0 it is sent by the kernel after Kernel.RemoveBinding rejected this action at the
 * root ("binding removed"): the workflow reads its rejection and propagates it as its own (tells an
 * awaiting turn, then signals its cascaded dependents and notifies the gatekeeper).
 */
export const cascadedSignal = defineSignal<[{ cascadedFrom: number }]>("cascaded");
/** Current workflow-side status: "waiting" | "approved" | "applying" | FinalStatus. */
export const actionStatusQuery = defineQuery<string>("status");

/** Input of an await-decision turn workflow. */
export interface TurnWorkflowInput {
  workspaceId: string;
  turnId: string;
}

/** The actions a suspended turn waits for (sent by the kernel with signal-with-start). */
export const turnAwaitingSignal = defineSignal<[{ actionIds: number[] }]>("awaiting");
/** An awaited action reached a final status (sent by its action workflow, with signal-with-start). */
export const turnActionDecidedSignal =
  defineSignal<[{ actionId: number; status: FinalStatus; reason?: string; resultJson?: string }]>(
    "actionDecided",
  );
