/**
 * Cascades (DESIGN.md "Approval semantics": "Reject (or a failed apply) cascades"): every pending
 * action that depends, transitively, on an action that did not complete is rejected with
 * `cascadedFrom` = the dependency it needed and reason "needed action N, which did not complete".
 */
import { ActionStatus } from "@gatehouse/proto";
import { type PlannedEvent, planned } from "./events.ts";
import type { WorkspaceState } from "./state.ts";

/** Actor and decidedBy recorded on cascaded rejections. */
export const CASCADE_ACTOR = "service:approval";

/** The reason recorded on an action rejected because dependency `dependencyId` did not complete. */
export function cascadeReason(dependencyId: number): string {
  return `needed action ${dependencyId}, which did not complete`;
}

/**
 * ActionRejected events, in submission order, for every pending action depending transitively on
 * one of `failedIds` (actions that are, or are about to be, rejected or failed).
 * Relies on dependencies always having smaller ids than their dependents.
 */
export function cascadeRejections(state: WorkspaceState, failedIds: Iterable<number>): PlannedEvent[] {
  const failed = new Set(failedIds);
  const out: PlannedEvent[] = [];
  for (const action of state.actions.values()) {
    if (action.status !== ActionStatus.ACTION_STATUS_PENDING || failed.has(action.id)) continue;
    const needed = action.dependsOn.find((d) => failed.has(d));
    if (needed === undefined) continue;
    failed.add(action.id);
    out.push(
      planned(
        "ActionRejected",
        {
          actionId: action.id,
          decidedBy: CASCADE_ACTOR,
          reason: cascadeReason(needed),
          cascadedFrom: needed,
        },
        CASCADE_ACTOR,
      ),
    );
  }
  return out;
}
