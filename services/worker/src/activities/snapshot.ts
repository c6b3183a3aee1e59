/** Reading one action out of the folded workspace state, in the shape the workflows use. */
import { ActionNotFound, type ActionState, type WorkspaceState } from "@gatehouse/approval-core";
import { ActionStatus, Delivery } from "@gatehouse/proto";
import type { ActionSnapshot, StreamStatus } from "../workflows/activity-api.ts";

const STATUS: Record<number, StreamStatus> = {
  [ActionStatus.ACTION_STATUS_PENDING]: "pending",
  [ActionStatus.ACTION_STATUS_APPROVED]: "approved",
  [ActionStatus.ACTION_STATUS_APPLYING]: "applying",
  [ActionStatus.ACTION_STATUS_APPLIED]: "applied",
  [ActionStatus.ACTION_STATUS_FAILED]: "failed",
  [ActionStatus.ACTION_STATUS_REJECTED]: "rejected",
};

/** The workflow-side status of a folded action. */
export function streamStatus(a: ActionState): StreamStatus {
  const s = STATUS[a.status];
  if (!s) throw new Error(`action ${a.id} has an unknown status ${a.status}`);
  return s;
}

/**
 * Ids of the actions rejected because `actionId` did not complete, transitively, in id order
 * (folded from `cascadedFrom`, so a retried activity finds the same list it appended).
 */
export function cascadedBy(state: WorkspaceState, actionId: number): number[] {
  const dead = new Set([actionId]);
  const out: number[] = [];
  for (const a of state.actions.values()) {
    if (a.status === ActionStatus.ACTION_STATUS_REJECTED && a.cascadedFrom && dead.has(a.cascadedFrom)) {
      dead.add(a.id);
      out.push(a.id);
    }
  }
  return out.sort((x, y) => x - y);
}

/** The snapshot of action `actionId`. @throws ActionNotFound. */
export function snapshotOf(state: WorkspaceState, actionId: number): ActionSnapshot {
  const a = state.actions.get(actionId);
  if (!a) throw new ActionNotFound(state.workspaceId, actionId);
  const status = streamStatus(a);
  return {
    actionId,
    status,
    decidedBy: a.decidedBy,
    reason: a.reason,
    cascadedFrom: a.cascadedFrom,
    outcomeUnknown: a.outcomeUnknown,
    resultJson: a.resultJson,
    submittedAtMs: Date.parse(a.submittedAt),
    awaited: a.description?.delivery === Delivery.DELIVERY_AWAIT,
    executionId: a.executionId,
    cascaded: status === "rejected" || status === "failed" ? cascadedBy(state, actionId) : [],
  };
}
