/**
 * Pure planning of the auto-approval drain (docs/architecture.md "The approval contract"): which action of a binding
 * rules may approve next, and which bindings a set of actions touches. The engine (Temporal) then
 * carries out each step; nothing here reads or writes anything.
 */
import { decide, type WorkspaceState } from "@gatehouse/approval-core";

/** The next approval a drain makes: the action and the rule that approves it. */
export interface AutoApproval {
  actionId: number;
  /** "rule:<binding>/<actionKind.tag>". */
  decidedBy: string;
}

/**
 * The first pending action of `binding` in submission order, when rules may approve it now;
 * undefined when the drain must stop (none pending, the first needs a person, it waits on an
 * undecided dependency, or the workspace is latched). Never skips ahead.
 */
export function nextAutoApproval(state: WorkspaceState, binding: string): AutoApproval | undefined {
  const [event] = decide({ type: "AutoApproveNext", binding }, state);
  if (!event) return undefined;
  const data = event.data as { actionId: number; decidedBy: string };
  return { actionId: data.actionId, decidedBy: data.decidedBy };
}

/** The distinct bindings of `actionIds` (unknown ids ignored), in first-seen order. */
export function bindingsOf(state: WorkspaceState, actionIds: Iterable<number>): string[] {
  const out = new Set<string>();
  for (const id of actionIds) {
    const b = state.actions.get(id)?.binding;
    if (b) out.add(b);
  }
  return [...out];
}

/**
 * The domain's approval plan: the requested ids plus (when asked) their undecided dependencies,
 * in submission order. @throws the domain's error (ActionNotFound, ActionNotPending,
 * DependenciesUndecided, WorkspaceLatched, InvalidField) — nothing is sent then.
 */
export function approvalPlan(
  state: WorkspaceState,
  actionIds: number[],
  decidedBy: string,
  includeDependencies: boolean,
): number[] {
  return decide({ type: "Approve", actionIds, decidedBy, includeDependencies }, state).map(
    (e) => (e.data as { actionId: number }).actionId,
  );
}

/** Validates a rejection with the domain. @throws ReasonRequired, ActionNotFound, ActionNotPending, InvalidField. */
export function validateReject(
  state: WorkspaceState,
  actionId: number,
  decidedBy: string,
  reason: string,
): void {
  decide({ type: "Reject", actionId, decidedBy, reason }, state);
}
