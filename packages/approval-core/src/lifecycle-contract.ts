/**
 * The contract between the deciders (approval service, kernel) and the lifecycle worker: task
 * queue, workflow ids, inputs and signals (docs/architecture.md "Temporal's part"). This module imports only
 * `@temporalio/workflow` definitions, so workflow code may import it (subpath
 * `@gatehouse/approval-core/lifecycle-contract`).
 *
 * Invariants:
 * - Decisions never go through Temporal: the approval service (and the kernel's RemoveBinding)
 *   append ActionApproved / ActionRejected (+ cascade) directly, with expected revision; the
 *   stream is the truth and Temporal holds nothing per action. A decision is taken once: the
 *   domain refuses a second one ("action N was already approved by X").
 * - One binding-run workflow per (workspace, binding): id `binding-run/<workspaceId>/<binding>`,
 *   started with signal-with-start (`bindingRunWakeSignal`) by whoever made an action of the
 *   binding claimable (an approval, an apply of a dependency in another binding, recovery). It
 *   loops: claim the next run — the binding's approved actions in submission order whose
 *   dependencies are applied (or earlier in the run), at most `runMax` — in ONE append of
 *   ActionApplying claims, apply it through one Gatekeeper.ApplyActions call, append the outcomes
 *   in batches. Bindings run in parallel; within a binding, in submission order.
 * - Apply is at most once: after its claim an action is sent at most once. An action the
 *   gatekeeper never reported `running` for was certainly not sent: its claim is handed back
 *   (ActionClaimReleased) and a later run claims it again. A claim whose call was lost, or that a
 *   retried activity finds without an outcome, ends as "outcome unknown" (ActionApplyFailed with
 *   outcome_unknown) and is never sent again — which is why runs are bounded by `runMax`.
 * - When an action becomes final (applied, failed, rejected — by a person, a cascade, expiry or
 *   the binding's removal), its awaiting turn is told (`turnActionsDecidedSignal`, the final actions
 *   of one announcement for that turn together, in order; `turnActionDecidedSignal` from older
 *   workers is still handled) before the
 *   rejections it cascaded are announced, and rejected actions are notified to their gatekeeper
 *   (best effort). The worker does this (`bindingRunAnnounceSignal`), never the deciders.
 * - Expiry needs no workflow: the approval service sweeps pending actions past their TTL and
 *   rejects them ("expired", decided by "system:expiry"), then announces them as above.
 * - Workflows of the previous engine (`actionLifecycle`, one per action) are terminated by the
 *   approval service's recovery at start-up; their approved actions are run by the binding runs.
 */
import { defineSignal } from "@temporalio/workflow";

/** Task queue of the lifecycle worker. */
export const LIFECYCLE_TASK_QUEUE = "gatehouse-lifecycle";

/** Default action time-to-live before expiry: 7 days, in milliseconds. */
export const DEFAULT_ACTION_TTL_MS = 7 * 24 * 60 * 60 * 1000;

/** Default longest run one ApplyActions call carries (APPLY_RUN_MAX), in actions. */
export const DEFAULT_APPLY_RUN_MAX = 100;

/** How long a binding run waits for a wake before it completes (a later wake starts it again), ms. */
export const DEFAULT_BINDING_RUN_IDLE_MS = 60_000;

/** Workflow id of a binding's run loop. */
export function bindingRunWorkflowId(workspaceId: string, binding: string): string {
  return `binding-run/${workspaceId}/${binding}`;
}

/** Workflow id of an await-decision turn (the turn id is the execution id that suspended). */
export function turnWorkflowId(workspaceId: string, turnId: string): string {
  return `turn/${workspaceId}/${turnId}`;
}

/** Workflow type names (registered by the worker). */
export const BINDING_RUN_WORKFLOW = "bindingRun";
export const TURN_WORKFLOW = "awaitDecisionTurn";
/** The previous engine's per-action workflow type; recovery terminates any still running. */
export const LEGACY_ACTION_WORKFLOW = "actionLifecycle";

/** Input of the binding-run workflow. */
export interface BindingRunInput {
  workspaceId: string;
  binding: string;
  /** Most actions one run (one ApplyActions call) carries; default DEFAULT_APPLY_RUN_MAX. */
  runMax?: number;
  /** Idle wait before completing, ms; default DEFAULT_BINDING_RUN_IDLE_MS. */
  idleMs?: number;
  /** Announcements carried over a continue-as-new (action ids, in order). */
  announce?: number[];
}

/** Something of the binding may be claimable now (an approval, a dependency applied): claim again. */
export const bindingRunWakeSignal = defineSignal<[]>("wake");
/**
 * These actions became final outside a run (a person's rejection with its cascade, expiry, the
 * binding's removal), in order: each root before the rejections it cascaded. The workflow tells
 * their awaiting turns, then notifies the gatekeepers of the rejected ones.
 */
export const bindingRunAnnounceSignal = defineSignal<[{ actionIds: number[] }]>("announce");

/** Final status of an action. */
export type FinalStatus = "applied" | "failed" | "rejected";

/** An action's final outcome as the stream records it. */
export interface DecisionOutcome {
  actionId: number;
  status: FinalStatus;
  /** Rejection reason or failure message. */
  reason?: string;
  /** True when the apply's outcome is unknown (see the invariants above); `reason` says why. */
  outcomeUnknown?: boolean;
  /** Actions rejected by the cascade this outcome caused (transitively), in id order. */
  cascaded: number[];
}

/** Input of an await-decision turn workflow. */
export interface TurnWorkflowInput {
  workspaceId: string;
  turnId: string;
}

/** The actions a suspended turn waits for (sent by the kernel with signal-with-start). */
export const turnAwaitingSignal = defineSignal<[{ actionIds: number[] }]>("awaiting");
/** An awaited action's final status, as a turn hears it. */
export interface TurnDecision {
  actionId: number;
  status: FinalStatus;
  reason?: string;
  resultJson?: string;
}
/**
 * An awaited action reached a final status (one per signal). Sent by workers before the batched
 * `turnActionsDecidedSignal`; turns still handle it.
 */
export const turnActionDecidedSignal = defineSignal<[TurnDecision]>("actionDecided");
/**
 * Awaited actions reached a final status: `decisions` in announcement order (a root before the
 * rejections it cascaded), every one of the same turn (sent by the worker, with signal-with-start;
 * one signal per announced group, so a run of 1,000 awaited writes is a few signals, not 1,000).
 */
export const turnActionsDecidedSignal = defineSignal<[{ decisions: TurnDecision[] }]>("actionsDecided");
