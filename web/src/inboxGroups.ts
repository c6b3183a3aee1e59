/** Pure grouping and filtering of the inbox: workspace → turn → binding, in submission order. */
import type { Action, Caller } from "@gatehouse/gateway-contract";
import { callerLabel } from "./format.ts";

/** Pending actions of one binding within a turn. */
export interface BindingGroup {
  binding: string;
  actions: Action[];
}

/** Pending actions of one turn (execution), by binding. */
export interface TurnGroup {
  executionId: string;
  caller: Caller;
  bindings: BindingGroup[];
  count: number;
}

/** Groups actions by turn, then binding; turns and bindings ordered by their earliest action. */
export function groupByTurn(actions: Action[]): TurnGroup[] {
  const sorted = [...actions].sort((a, b) => a.id - b.id);
  const turns = new Map<string, TurnGroup>();
  for (const action of sorted) {
    let turn = turns.get(action.executionId);
    if (!turn) {
      turn = { executionId: action.executionId, caller: action.caller, bindings: [], count: 0 };
      turns.set(action.executionId, turn);
    }
    let group = turn.bindings.find((b) => b.binding === action.binding);
    if (!group) {
      group = { binding: action.binding, actions: [] };
      turn.bindings.push(group);
    }
    group.actions.push(action);
    turn.count += 1;
  }
  return [...turns.values()];
}

/** The display order of grouped actions (what j/k walk through). */
export function flatten(turns: TurnGroup[]): Action[] {
  return turns.flatMap((t) => t.bindings.flatMap((b) => b.actions));
}

/** Inbox filters; an empty string means "any". */
export interface InboxFilters {
  workspace: string;
  binding: string;
  kind: string;
  caller: string;
}

/** The kind key of an action for filtering (its tag, or "" when unclassified). */
export function kindKey(action: Action): string {
  return action.actionKind?.tag ?? "";
}

/** Whether an action passes the filters (workspace is filtered by the caller of this function). */
export function matches(action: Action, filters: InboxFilters): boolean {
  if (filters.binding && action.binding !== filters.binding) return false;
  if (filters.kind && kindKey(action) !== filters.kind) return false;
  if (filters.caller && callerLabel(action.caller) !== filters.caller) return false;
  return true;
}

/**
 * How many pending actions `action` transitively depends on (what "approve with N earlier" would
 * include), following `dependsOn` through the workspace's pending actions.
 */
export function countUndecided(action: Action, pendingById: Map<number, Action>): number {
  const seen = new Set<number>();
  const stack = [...action.dependsOn];
  while (stack.length > 0) {
    const id = stack.pop()!;
    if (seen.has(id)) continue;
    const dep = pendingById.get(id);
    if (!dep) continue;
    seen.add(id);
    stack.push(...dep.dependsOn);
  }
  return seen.size;
}
