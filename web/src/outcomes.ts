/**
 * Tracks the actions this person decided in this tab, and turns their final states into outcome
 * messages: applied, failed (with the gatekeeper's message) or rejected (including cascades, which
 * name the action they needed). Each action is announced once.
 */
import type { Action } from "@gatehouse/gateway-contract";

/** One outcome worth a toast. */
export interface Outcome {
  key: string;
  workspaceId: string;
  actionId: number;
  kind: "applied" | "failed" | "rejected";
  text: string;
}

const key = (workspaceId: string, actionId: number) => `${workspaceId}:${actionId}`;

/** Remembers decided actions and reports each one's final state once. */
export class OutcomeTracker {
  private readonly decided = new Set<string>();
  private readonly announced = new Set<string>();

  /** Records the actions a decision of this person changed; returns outcomes already final. */
  record(actions: Action[]): Outcome[] {
    for (const action of actions) this.decided.add(key(action.workspaceId, action.id));
    return this.observe(actions);
  }

  /** Looks at fresh action states (inbox, detail); returns outcomes not announced yet. */
  observe(actions: Action[]): Outcome[] {
    const out: Outcome[] = [];
    for (const action of actions) {
      const k = key(action.workspaceId, action.id);
      const cascade =
        action.cascadedFrom > 0 && this.decided.has(key(action.workspaceId, action.cascadedFrom));
      if (!this.decided.has(k) && !cascade) continue;
      this.decided.add(k);
      if (this.announced.has(k)) continue;
      const outcome = toOutcome(k, action);
      if (!outcome) continue;
      this.announced.add(k);
      out.push(outcome);
    }
    return out;
  }
}

function toOutcome(k: string, action: Action): Outcome | null {
  const base = { key: k, workspaceId: action.workspaceId, actionId: action.id };
  const name = `#${action.id} ${action.title}`;
  switch (action.status) {
    case "applied":
      return { ...base, kind: "applied", text: `${name}: applied` };
    case "failed":
      return { ...base, kind: "failed", text: `${name}: failed: ${action.reason || "no message"}` };
    case "rejected":
      return { ...base, kind: "rejected", text: `${name}: rejected: ${action.reason || "no reason"}` };
    default:
      return null;
  }
}
