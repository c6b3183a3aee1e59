/**
 * The ONE place that decides, applies and cascades actions (DESIGN.md "Approval semantics" and
 * "Orchestration"): nothing else may call a gatekeeper's ApplyAction/ActionRejected or append
 * decision events (ActionApproved, ActionRejected, ActionApplying, ActionApplied, ActionApplyFailed).
 * `InProcessLifecycle` runs it in this process; a later issue moves it onto Temporal.
 */
import type { ActionRecord } from "@gatehouse/proto";

/** Options of `ActionLifecycle.approve`. */
export interface ApproveOptions {
  /** Also approve the undecided dependencies (transitively), in submission order. */
  includeDependencies?: boolean;
}

export interface ActionLifecycle {
  /**
   * Approves `actionIds` (plus undecided dependencies when asked) and applies each in submission
   * order: ActionApproved -> ActionApplying (claim) -> gatekeeper ApplyAction -> ActionApplied or
   * ActionApplyFailed (+ cascade). Afterwards the auto-approval drain of the touched bindings resumes.
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
   * gatekeeper is told (best effort). @throws ReasonRequired, ActionNotFound, ActionNotPending.
   */
  reject(workspaceId: string, actionId: number, decidedBy: string, reason: string): Promise<ActionRecord[]>;
  /** Drains auto-approval for the binding of a just-submitted action. @returns the drained records. */
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
   * Start-up recovery: every action left APPLYING by another (gone) process becomes
   * ActionApplyFailed{outcomeUnknown: true} + cascade — never a retry. Approved actions whose claim
   * was never taken are applied; pending auto-approvable actions are drained.
   * @returns the number of claims turned into "outcome unknown".
   */
  recover(): Promise<number>;
  /** Resolves when in-flight decisions finished. */
  idle(): Promise<void>;
}
