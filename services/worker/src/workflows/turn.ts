/** Pure rules of an await-decision turn: when it ends, and how. */
import type { TurnResult } from "./activity-api.ts";

/** How a turn ends once its awaited actions are known and decided enough. */
export type TurnEnd =
  | { state: "resumed"; reason: ""; results: TurnResult[] }
  | { state: "completed"; reason: string; results: TurnResult[] };

/**
 * The turn's end, or undefined while it must wait: it resumes when every awaited action was
 * applied, and completes as soon as one was rejected or failed (the first in `awaited` order names
 * the reason). Results are the decided awaited actions, in `awaited` order.
 */
export function turnEnd(awaited: number[], decided: ReadonlyMap<number, TurnResult>): TurnEnd | undefined {
  const results = awaited.flatMap((id) => {
    const r = decided.get(id);
    return r ? [r] : [];
  });
  const notApplied = results.find((r) => r.status !== "applied");
  if (notApplied) {
    const why = notApplied.status === "rejected" ? "was rejected" : "failed";
    const reason = `action ${notApplied.actionId} ${why}${notApplied.reason ? `: ${notApplied.reason}` : ""}`;
    return { state: "completed", reason, results };
  }
  if (results.length === awaited.length) return { state: "resumed", reason: "", results };
  return undefined;
}
