/**
 * How the approval service decides actions (DESIGN.md "Approval semantics" and "Orchestration").
 * The one engine is Temporal: `TemporalLifecycle` validates with the domain and hands decisions to
 * the per-action workflow; the lifecycle worker's activities append the decision events
 * (ActionApproved, ActionRejected, ActionApplying, ActionApplied, ActionApplyFailed) and call the
 * gatekeeper. Deciding never calls a gatekeeper from this service (its one gatekeeper call is
 * RequestRevert's PrepareRevert, src/revert.ts, which stages and applies nothing).
 */
import type { ActionRecord } from "@gatehouse/proto";

/** Options of `ActionLifecycle.approve`. */
export interface ApproveOptions {
  /** Also approve the undecided dependencies (transitively), in submission order. */
  includeDependencies?: boolean;
}

export interface ActionLifecycle {
  /**
   * Approves `actionIds` (plus undecided dependencies when asked) and has each applied in
   * submission order, one outcome before the next: ActionApproved -> ActionApplying (claim) ->
   * gatekeeper ApplyAction -> ActionApplied or ActionApplyFailed (+ cascade). When no worker accepts
   * a decision in time it is stored durably and the record is returned still PENDING (it applies
   * once a worker runs). Afterwards the auto-approval drain of the touched bindings resumes.
   * @returns every record touched (approved, applied/failed, cascaded, drained), by id.
   * @throws ActionNotFound, ActionNotPending ("action N was already approved by X"),
   *   DependenciesUndecided, WorkspaceLatched, WorkspaceNotFound — nothing appended then.
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
   * Starts the just-submitted action's workflow and drains auto-approval for its binding.
   * @returns the drained records.
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
   * Start-up recovery: every non-final action gets its workflow (a retried start is a no-op);
   * pending auto-approvable actions are drained. A claim left by a crash is the worker's apply
   * activity's to settle ("outcome unknown", never a silent retry).
   * @returns the number of open actions whose workflow was ensured.
   */
  recover(): Promise<number>;
  /** Resolves when in-flight decisions finished. */
  idle(): Promise<void>;
}
