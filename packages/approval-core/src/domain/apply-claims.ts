/**
 * Deciders of the apply phase of one action: claim it for apply (ActionApplying, at most once),
 * hand an unsent claim back (ActionClaimReleased), record its outcome (ActionApplied, or
 * ActionApplyFailed with the cascade of its dependents). A run of actions is claimed by run-plan.ts.
 */
import { ActionStatus } from "@gatehouse/proto";
import { cascadeRejections } from "./cascade.ts";
import type { ClaimApply, RecordApplied, RecordApplyFailed, ReleaseClaim } from "./commands.ts";
import { ActionStateConflict } from "./errors.ts";
import { type PlannedEvent, planned } from "./events.ts";
import { describeDecided, requireAction, SERVICE_ACTOR } from "./guards.ts";
import type { ActionState, WorkspaceState } from "./state.ts";

/** Decides ClaimApply (see the module comment). @throws ActionStateConflict, ActionNotFound. */
export function claimApply(c: ClaimApply, state: WorkspaceState): PlannedEvent[] {
  const a = requireAction(state, c.actionId);
  if (a.status !== ActionStatus.ACTION_STATUS_APPROVED) {
    throw new ActionStateConflict(`action ${a.id} cannot be claimed for apply: it ${describeDecided(a)}`);
  }
  // The grant is re-checked here, at apply time: an action of a removed grant never applies, even
  // through a binding of the same name introduced again (a new grant).
  const grant = state.bindings.get(a.binding)?.grant;
  if (grant !== a.grant) {
    throw new ActionStateConflict(
      `action ${a.id} cannot be applied: binding ${a.binding} was removed${grant === undefined ? "" : " and introduced again as a new grant"} after it was submitted; the request was not sent`,
    );
  }
  const notApplied = a.dependsOn.filter(
    (d) => state.actions.get(d)?.status !== ActionStatus.ACTION_STATUS_APPLIED,
  );
  if (notApplied.length > 0) {
    throw new ActionStateConflict(
      `action ${a.id} cannot be applied before its dependencies ${notApplied.join(", ")} are applied`,
    );
  }
  return [planned("ActionApplying", { actionId: a.id, claimedBy: c.claimedBy }, SERVICE_ACTOR)];
}

function requireApplying(state: WorkspaceState, id: number): ActionState {
  const a = requireAction(state, id);
  if (a.status !== ActionStatus.ACTION_STATUS_APPLYING) {
    throw new ActionStateConflict(`action ${a.id} has no apply claim to complete: it ${describeDecided(a)}`);
  }
  return a;
}

/** Decides ReleaseClaim (see the module comment). @throws ActionStateConflict, ActionNotFound. */
export function releaseClaim(c: ReleaseClaim, state: WorkspaceState): PlannedEvent[] {
  const a = requireApplying(state, c.actionId);
  if (a.claimedBy !== c.claimedBy) {
    throw new ActionStateConflict(
      `action ${a.id}'s apply claim is held by ${a.claimedBy}, not ${c.claimedBy}; only its holder may hand it back`,
    );
  }
  return [
    planned(
      "ActionClaimReleased",
      { actionId: a.id, claimedBy: c.claimedBy, reason: c.reason },
      SERVICE_ACTOR,
    ),
  ];
}

/** Decides RecordApplied (see the module comment). @throws ActionStateConflict, ActionNotFound. */
export function recordApplied(c: RecordApplied, state: WorkspaceState): PlannedEvent[] {
  const a = requireApplying(state, c.actionId);
  return [planned("ActionApplied", { actionId: a.id, resultJson: c.resultJson }, SERVICE_ACTOR)];
}

/** Decides RecordApplyFailed (see the module comment). @throws ActionStateConflict, ActionNotFound. */
export function recordApplyFailed(c: RecordApplyFailed, state: WorkspaceState): PlannedEvent[] {
  const a = requireApplying(state, c.actionId);
  return [
    planned(
      "ActionApplyFailed",
      { actionId: a.id, message: c.message, outcomeUnknown: c.outcomeUnknown },
      SERVICE_ACTOR,
    ),
    ...cascadeRejections(state, [a.id]),
  ];
}
