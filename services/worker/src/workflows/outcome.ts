/** Pure helpers of the action workflow: final outcomes and "already decided" messages. */
import type { DecisionOutcome, FinalStatus } from "@gatehouse/approval-core/lifecycle-contract";
import type { ActionSnapshot, StreamStatus } from "./activity-api.ts";

/** True for a status no decision can change. */
export function isFinal(status: StreamStatus): status is FinalStatus {
  return status === "applied" || status === "failed" || status === "rejected";
}

/** The DecisionOutcome of a final snapshot. */
export function outcomeOf(s: ActionSnapshot & { status: FinalStatus }): DecisionOutcome {
  const out: DecisionOutcome = { actionId: s.actionId, status: s.status, cascaded: [...s.cascaded] };
  if (s.reason) out.reason = s.reason;
  if (s.outcomeUnknown) out.outcomeUnknown = true;
  return out;
}

/** What a recorded decision was, for the refusal of a later one. */
export interface RecordedDecision {
  kind: "approved" | "rejected";
  by: string;
}

/** The message of a decision refused because the action was decided: "action 7 was already approved by user:alice". */
export function alreadyDecidedMessage(actionId: number, d: RecordedDecision): string {
  return `action ${actionId} was already ${d.kind} by ${d.by}`;
}

/** The recorded decision a snapshot shows, or undefined while pending. */
export function recordedDecisionOf(s: ActionSnapshot): RecordedDecision | undefined {
  if (s.status === "pending") return undefined;
  return { kind: s.status === "rejected" ? "rejected" : "approved", by: s.decidedBy };
}

/** Actor and reason of an expiry. */
export const EXPIRY_ACTOR = "system:expiry";
export const EXPIRY_REASON = "expired";
