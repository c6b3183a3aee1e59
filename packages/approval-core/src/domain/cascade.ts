/**
 * Cascades (docs/architecture.md "The approval contract": "Reject (or a failed apply) cascades"): every pending
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

/** Actor and decidedBy of an expiry. */
export const EXPIRY_ACTOR = "system:expiry";
/** The reason recorded on an expired action. */
export const EXPIRY_REASON = "expired";

/**
 * The ExpireDue decision: ActionRejected "expired" for each overdue pending action whose
 * dependencies are not rejected here, then the cascade of those, in submission order.
 */
export function expireDue(state: WorkspaceState, ttlMs: number, nowMs: number): PlannedEvent[] {
  const dead = new Set<number>();
  const roots: number[] = [];
  for (const a of state.actions.values()) {
    if (a.status !== ActionStatus.ACTION_STATUS_PENDING) continue;
    if (a.dependsOn.some((d) => dead.has(d))) dead.add(a.id);
    else if (Date.parse(a.submittedAt) + ttlMs <= nowMs) {
      roots.push(a.id);
      dead.add(a.id);
    }
  }
  if (roots.length === 0) return [];
  return [
    ...roots.map((id) =>
      planned(
        "ActionRejected",
        { actionId: id, decidedBy: EXPIRY_ACTOR, reason: EXPIRY_REASON, cascadedFrom: 0 },
        EXPIRY_ACTOR,
      ),
    ),
    ...cascadeRejections(state, roots),
  ];
}
