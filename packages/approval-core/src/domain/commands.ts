/**
 * Commands the approval decider accepts. Identity fields (binding, caller) come from a verified
 * caller token or from the authenticated person, never from untrusted request fields.
 */
import type { ActionDescription, ObservationDescription } from "@gatehouse/proto";

/** A gatekeeper read (ApprovalQueue.AuthorizeObservation). */
export interface RecordObservation {
  type: "RecordObservation";
  binding: string;
  /** The grant the caller token names; a removed grant is refused. Undefined: not checked (older tokens). */
  grant?: number | undefined;
  description: ObservationDescription | undefined;
  executionId: string;
  /**
   * The gatekeeper's id of this read, the same on each retry ("" = none): a retry with the same id
   * (same binding and execution) and description records nothing (the decider returns no events;
   * `recordedObservationId` finds the recorded one). The same id with another description is refused.
   */
  requestId: string;
}

/**
 * A gatekeeper write held for approval (ApprovalQueue.SubmitAction). A retry of a recorded
 * submission (same binding, local id and execution, identical description and payload) returns no
 * events: the recorded action stands (`state.localIds` finds it). Once the workspace is latched,
 * a write to a binding that did not read the restricted data, or any write with
 * `description.egress`, is refused and recorded as ActionRefused (see `ApprovalError.recorded`).
 */
export interface SubmitAction {
  type: "SubmitAction";
  binding: string;
  /** The grant the caller token names; a removed grant is refused. Undefined: not checked (older tokens). */
  grant?: number | undefined;
  localId: string;
  description: ActionDescription | undefined;
  payloadJson: string;
  executionId: string;
}

/**
 * A person approves actions. The decider returns ActionApproved for each, in submission order;
 * with `includeDependencies` the undecided dependencies (transitively) are approved too.
 * Dependencies that are themselves in `actionIds` count as decided (a batch).
 */
export interface Approve {
  type: "Approve";
  actionIds: number[];
  decidedBy: string;
  includeDependencies: boolean;
  /**
   * Action id -> the description digest the person was shown (ActionRecord.description_digest).
   * When given (non-empty) every approved action, dependencies included, needs a matching digest,
   * else DescriptionNotShown / DescriptionDigestMismatch and nothing is approved. Absent or empty:
   * the decision is not bound to a description (recorded as "").
   */
  descriptionDigests?: ReadonlyMap<number, string> | undefined;
}

/**
 * A person takes approvals back before apply: each named action must be APPROVED (not claimed);
 * it and every approved action that depends on it (transitively) become pending again
 * (ActionApprovalWithdrawn), in submission order.
 */
export interface WithdrawApproval {
  type: "WithdrawApproval";
  actionIds: number[];
  withdrawnBy: string;
  reason: string;
}

/** A person rejects one action; pending dependents are rejected by cascade. */
export interface Reject {
  type: "Reject";
  actionId: number;
  decidedBy: string;
  reason: string;
}

/** The next action of `binding` the auto-approval rules may approve (drain step); [] = stop. */
export interface AutoApproveNext {
  type: "AutoApproveNext";
  binding: string;
}

/** The at-most-once apply claim, taken before the gatekeeper is called. */
export interface ClaimApply {
  type: "ClaimApply";
  actionId: number;
  /** Instance id of the process that will call the gatekeeper. */
  claimedBy: string;
}

/**
 * The batch apply's claim (Gatekeeper.ApplyActions): ActionApplying for each action of the
 * binding's next run (`planRun`: approved, in submission order, dependencies applied or earlier in
 * the run, at most `max`), preceded by the cascade of approved actions that can never apply (a
 * dependency rejected or failed). One append; [] when nothing is claimable.
 */
export interface ClaimRun {
  type: "ClaimRun";
  binding: string;
  /** Most actions to claim, ≥ 1. */
  max: number;
  /** Instance id of the process that will call the gatekeeper (ActionApplying.claimed_by). */
  claimedBy: string;
}

/**
 * Expiry (the approval service's sweep): every pending action submitted at least `ttlMs` before
 * `nowMs` is rejected — reason EXPIRY_REASON, decided by EXPIRY_ACTOR — except one whose
 * dependency is rejected here, which the cascade rejects (naming that dependency). [] when none is due.
 */
export interface ExpireDue {
  type: "ExpireDue";
  /** Pending time-to-live, ms. */
  ttlMs: number;
  /** Now, ms since the epoch. */
  nowMs: number;
}

/**
 * Hands an unused apply claim back: the gatekeeper never started the action (a batch apply stopped
 * before it, or refused the run before any action started), so the request was certainly not sent.
 * ActionClaimReleased; the action is APPROVED again. Only for an APPLYING action held by `claimedBy`.
 */
export interface ReleaseClaim {
  type: "ReleaseClaim";
  actionId: number;
  /** The claim to hand back (ActionApplying.claimed_by); another holder's claim is refused. */
  claimedBy: string;
  /** Why it was not sent (recorded). */
  reason: string;
}

/** The gatekeeper applied the action. */
export interface RecordApplied {
  type: "RecordApplied";
  actionId: number;
  resultJson: string;
}

/** The apply failed (or its outcome is unknown); pending dependents are rejected by cascade. */
export interface RecordApplyFailed {
  type: "RecordApplyFailed";
  actionId: number;
  message: string;
  outcomeUnknown: boolean;
}

/**
 * A person enables or disables auto-approval for (binding, action kind tag). Enabling needs a tag the
 * binding's gatekeeper published as auto-approvable (ResourceIntroduced.actionKinds); disabling
 * needs a rule that is on (RuleNotFound otherwise, nothing recorded), whatever its kind.
 */
export interface SetAutoApprovalRule {
  type: "SetAutoApprovalRule";
  binding: string;
  actionKindTag: string;
  enabled: boolean;
  setBy: string;
}

/**
 * A person asks to revert an applied action (Decisions.RequestRevert). The action's gatekeeper
 * already staged the inverse write (Gatekeeper.PrepareRevert); the decider submits it as a new
 * pending action of the same binding, with `description.implementsRevert` = `actionId`, and
 * records ActionReverted — one append.
 */
export interface RequestRevert {
  type: "RequestRevert";
  /** The applied action to revert. */
  actionId: number;
  /** "user:<id>" of the person asking. */
  requestedBy: string;
  /** From PrepareRevertResponse: the gatekeeper-local id of the revert action. */
  localId: string;
  /** From PrepareRevertResponse: the revert action's description. */
  description: ActionDescription | undefined;
  /** From PrepareRevertResponse: the staged payload. */
  payloadJson: string;
}

/**
 * A person takes a binding back (Kernel.RemoveBinding). The decider returns BindingRemoved, then
 * ActionRejected (reason REMOVAL_REASON, decidedBy `removedBy`) for each of the binding's actions of
 * the current grant that is pending or approved (not yet claimed), then their cascades — one append.
 */
export interface RemoveBinding {
  type: "RemoveBinding";
  binding: string;
  /** "user:<id>" of the person removing it. */
  removedBy: string;
  /** Optional: why (recorded in BindingRemoved.reason), at most 500 characters. */
  reason: string;
}

export type Command =
  | RecordObservation
  | SubmitAction
  | Approve
  | WithdrawApproval
  | Reject
  | AutoApproveNext
  | ClaimApply
  | ClaimRun
  | ExpireDue
  | ReleaseClaim
  | RecordApplied
  | RecordApplyFailed
  | SetAutoApprovalRule
  | RequestRevert
  | RemoveBinding;
