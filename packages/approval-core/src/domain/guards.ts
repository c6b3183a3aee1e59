/**
 * What several deciders share: the actor of the service's own events, looking an action up, and the
 * human account of an action that is no longer pending (used in refusals).
 */
import { ActionStatus } from "@gatehouse/proto";
import { ActionNotFound } from "./errors.ts";
import type { ActionState, WorkspaceState } from "./state.ts";

/** Actor of events the service appends on a gatekeeper's behalf. */
export const SERVICE_ACTOR = "service:approval";

/**
 * The action `id` of the workspace.
 * @throws ActionNotFound when the workspace has no such action.
 */
export function requireAction(state: WorkspaceState, id: number): ActionState {
  const a = state.actions.get(id);
  if (!a) throw new ActionNotFound(state.workspaceId, id);
  return a;
}

/** Human account of a decided action: who decided it and how. */
export function describeDecided(a: ActionState): string {
  switch (a.status) {
    case ActionStatus.ACTION_STATUS_APPROVED:
      return `was already approved by ${a.decidedBy}`;
    case ActionStatus.ACTION_STATUS_APPLYING:
      return `was already approved by ${a.decidedBy} and is being applied`;
    case ActionStatus.ACTION_STATUS_APPLIED:
      return `was already approved by ${a.decidedBy} and applied`;
    case ActionStatus.ACTION_STATUS_FAILED:
      return `was already approved by ${a.decidedBy} and its apply failed${a.outcomeUnknown ? " (outcome unknown)" : ""}`;
    case ActionStatus.ACTION_STATUS_REJECTED:
      return a.cascadedFrom
        ? `was already rejected by ${a.decidedBy} because it needed action ${a.cascadedFrom}, which did not complete`
        : `was already rejected by ${a.decidedBy}`;
    default:
      return "is not pending";
  }
}
