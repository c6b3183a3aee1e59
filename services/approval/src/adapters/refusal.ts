/** Turns a decision the action's workflow refused into the domain's ActionNotPending. */
import { ActionNotPending } from "@gatehouse/approval-core";
import type { Decision } from "@gatehouse/approval-core/lifecycle-contract";

/**
 * The workflow's words ("action N was already approved by X") become the error's detail; an
 * approval refused because someone else approved first lost a race (ABORTED, not FAILED_PRECONDITION).
 */
export function refusalOf(actionId: number, decision: Decision, words: string): ActionNotPending {
  const prefix = `action ${actionId} `;
  const detail = words.startsWith(prefix)
    ? words.slice(prefix.length)
    : `was refused by its lifecycle: ${words}`;
  return new ActionNotPending(
    actionId,
    detail,
    decision.kind === "approve" && /already approved/.test(detail),
  );
}
