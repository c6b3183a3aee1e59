/**
 * Revocation (Kernel.RemoveBinding): a binding taken back rejects what it still had waiting.
 * Pure, like the rest of the decider (decide.ts dispatches here).
 */
import { ActionStatus } from "@gatehouse/proto";
import { cascadeRejections } from "./cascade.ts";
import type { RemoveBinding } from "./commands.ts";
import { InvalidField, UnknownBinding } from "./errors.ts";
import { type PlannedEvent, planned } from "./events.ts";
import type { ActionState, WorkspaceState } from "./state.ts";

/** The reason recorded on an action rejected because its binding was removed. */
export const REMOVAL_REASON = "binding removed";

/** Longest reason a person may give for a removal, in characters. */
export const MAX_REMOVAL_REASON = 500;

/** Statuses a removal rejects: the action has not been claimed for apply, so nothing was sent. */
const UNSENT = new Set([ActionStatus.ACTION_STATUS_PENDING, ActionStatus.ACTION_STATUS_APPROVED]);

/**
 * BindingRemoved, then ActionRejected "binding removed" for every action of the binding's current
 * grant that is pending or approved (a pending action whose dependency is rejected here is left to
 * the cascade, which names the dependency), then `cascadeRejections` of them, in submission order.
 * An action already APPLYING keeps its claim: its call may be in flight, so its outcome is recorded.
 * @throws InvalidField (no removed_by, reason too long), UnknownBinding.
 */
export function removeBinding(c: RemoveBinding, state: WorkspaceState): PlannedEvent[] {
  if (!c.removedBy) throw new InvalidField("removed_by", 'say who removes the binding, e.g. "user:alice"');
  if (c.reason.length > MAX_REMOVAL_REASON) {
    throw new InvalidField("reason", `at most ${MAX_REMOVAL_REASON} characters; shorten it`);
  }
  const info = state.bindings.get(c.binding);
  if (!info) throw new UnknownBinding(c.binding);
  const events: PlannedEvent[] = [
    planned(
      "BindingRemoved",
      { binding: c.binding, removedBy: c.removedBy, reason: c.reason, grant: info.grant },
      c.removedBy,
    ),
  ];
  const rejected = new Set<number>();
  for (const a of state.actions.values()) {
    if (!ofGrant(a, c.binding, info.grant) || !UNSENT.has(a.status)) continue;
    const viaDependency =
      a.status === ActionStatus.ACTION_STATUS_PENDING && a.dependsOn.some((d) => rejected.has(d));
    rejected.add(a.id);
    if (viaDependency) continue;
    events.push(
      planned(
        "ActionRejected",
        { actionId: a.id, decidedBy: c.removedBy, reason: REMOVAL_REASON, cascadedFrom: 0 },
        c.removedBy,
      ),
    );
  }
  const direct = events.slice(1).map((e) => (e.data as { actionId: number }).actionId);
  return [...events, ...cascadeRejections(state, direct)];
}

function ofGrant(a: ActionState, binding: string, grant: number): boolean {
  return a.binding === binding && a.grant === grant;
}
