/** An action's final outcome read from the folded workspace state. */
import type { WorkspaceState } from "@gatehouse/approval-core";
import type { DecisionOutcome } from "@gatehouse/approval-core/lifecycle-contract";
import { ActionStatus } from "@gatehouse/proto";
import { turnResultOf } from "./notices.ts";

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

/**
 * The final outcome of `actionId` as the stream records it (status, reason, outcome unknown, and
 * the actions its rejection or failure cascaded to), or undefined while it is not final.
 */
export function outcomeOf(state: WorkspaceState, actionId: number): DecisionOutcome | undefined {
  const a = state.actions.get(actionId);
  if (!a) return undefined;
  const result = turnResultOf(a);
  if (!result) return undefined;
  const out: DecisionOutcome = {
    actionId,
    status: result.status,
    cascaded: result.status === "applied" ? [] : cascadedBy(state, actionId),
  };
  if (a.reason) out.reason = a.reason;
  if (a.outcomeUnknown) out.outcomeUnknown = true;
  return out;
}
