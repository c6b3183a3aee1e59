/**
 * How the approval service decides actions (docs/architecture.md "The approval contract" and "Temporal's part").
 * `DecisionService` (decision-service.ts) appends decisions (ActionApproved, ActionRejected + cascade) directly; the
 * lifecycle worker's binding runs (Temporal) append the claims and outcomes (ActionApplying,
 * ActionApplied, ActionApplyFailed, ActionClaimReleased) and call the gatekeeper. Deciding never calls a gatekeeper from this service (its one gatekeeper call is
 * RequestRevert's PrepareRevert, src/revert.ts, which stages and applies nothing).
 */
import type { ActionRecord } from "@gatehouse/proto";

/** Options of `ActionLifecycle.approve`. */
export interface ApproveOptions {
  /** Also approve the undecided dependencies (transitively), in submission order. */
  includeDependencies?: boolean;
  /** Return once the approvals are recorded, without waiting for the applies. */
  returnOnceRecorded?: boolean;
  /** Stop waiting for outcomes at this time (ms since the epoch), e.g. the request's deadline. */
  deadlineMs?: number;
  /**
   * Action id -> the description digest the person was shown. When not empty, every approved
   * action needs a matching one (all or nothing; see the decider's Approve.descriptionDigests).
   */
  descriptionDigests?: ReadonlyMap<number, string>;
}

export interface ActionLifecycle {
  /**
   * Approves `actionIds` (plus undecided dependencies when asked): every ActionApproved in one
   * append; the bindings' runs then apply them in submission order (ActionApplying claims ->
   * Gatekeeper.ApplyActions -> ActionApplied or ActionApplyFailed + cascade). Waits for the
   * outcomes by watching the stream, until the deadline, or until none progressed for a while (no
   * worker runs: the records come back APPROVED and apply once one does) — unless
   * `returnOnceRecorded`. Afterwards the auto-approval drain of the touched bindings resumes.
   * @returns every record touched (approved, applied/failed, cascaded, drained), by id.
   * @throws ActionNotFound, ActionNotPending ("action N was already approved by X"),
   *   DependenciesUndecided, WorkspaceLatched, WorkspaceNotFound, DescriptionNotShown,
   *   DescriptionDigestMismatch — nothing appended then.
   */
  approve(
    workspaceId: string,
    actionIds: number[],
    decidedBy: string,
    options?: ApproveOptions,
  ): Promise<ActionRecord[]>;
  /**
   * Rejects one pending action with a reason; pending dependents are rejected by cascade and the
   * gatekeeper is told (best effort, by the worker). @throws ReasonRequired, ActionNotFound, ActionNotPending.
   */
  reject(workspaceId: string, actionId: number, decidedBy: string, reason: string): Promise<ActionRecord[]>;
  /**
   * Takes approvals back before apply (ActionApprovalWithdrawn for the named actions and their
   * approved dependents, one append): they are pending again and no run claims them.
   * @returns the withdrawn records. @throws ApprovalNotWithdrawable (applying, final or pending),
   *   ActionNotFound, InvalidField — nothing appended then.
   */
  withdraw(
    workspaceId: string,
    actionIds: number[],
    withdrawnBy: string,
    reason: string,
  ): Promise<ActionRecord[]>;
  /**
   * Drains auto-approval for the just-submitted action's binding in the background (not awaited:
   * SubmitAction never waits on the lifecycle). @returns [] at once.
   */
  afterSubmit(workspaceId: string, actionId: number): Promise<ActionRecord[]>;
  /**
   * Enables/disables auto-approval for (binding, tag) and drains that binding.
   * @returns the records the drain approved. @throws UnknownBinding, InvalidField.
   */
  setAutoApprovalRule(
    workspaceId: string,
    rule: { binding: string; actionKindTag: string; enabled: boolean; setBy: string },
  ): Promise<ActionRecord[]>;
  /**
   * Start-up recovery: the runs of bindings with approved or applying actions are woken (a claim
   * left by a crash is the run's to settle: "outcome unknown", never a silent retry); pending
   * auto-approvable actions are drained; the expiry sweep starts. @returns the bindings woken.
   */
  recover(): Promise<number>;
  /** Resolves when in-flight decisions finished. */
  idle(): Promise<void>;
}
