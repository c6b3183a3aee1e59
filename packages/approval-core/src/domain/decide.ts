/**
 * The approval decider: `decide(command, state) -> PlannedEvent[]`, pure. Throws a typed
 * ApprovalError (domain/errors.ts) when the command is refused; nothing is appended then.
 * Rules: docs/architecture.md "The approval contract"; the returned events are appended at `state.revision`
 * (expected revision), so the i-th event gets revision `state.revision + 1 + i`.
 */
import { ActionDescription, ActionStatus, ObservationDescription } from "@gatehouse/proto";
import { claimApply, recordApplied, recordApplyFailed, releaseClaim } from "./apply-claims.ts";
import { CASCADE_ACTOR, cascadeReason, cascadeRejections, expireDue } from "./cascade.ts";
import type {
  Approve,
  AutoApproveNext,
  Command,
  RecordObservation,
  Reject,
  RequestRevert,
  SetAutoApprovalRule,
  SubmitAction,
  WithdrawApproval,
} from "./commands.ts";
import {
  ActionKindNotAutoApprovable,
  ActionKindsNotPublished,
  ActionNotPending,
  ActionNotRevertible,
  ApprovalNotWithdrawable,
  DependenciesUndecided,
  DescriptionDigestMismatch,
  DescriptionNotShown,
  DuplicateLocalId,
  DuplicateObservationRequest,
  InvalidField,
  ReasonRequired,
  RuleNotFound,
  UnknownActionKind,
  UnknownBinding,
  UnknownDependency,
  WorkspaceLatched,
  WorkspaceNotFound,
} from "./errors.ts";
import { type PlannedEvent, planned } from "./events.ts";
import { describeDecided, requireAction, SERVICE_ACTOR } from "./guards.ts";
import { actionDigest } from "./projection.ts";
import { removeBinding } from "./remove-binding.ts";
import { claimRun } from "./run-plan.ts";
import {
  type ActionState,
  localIdKey,
  observationRequestKey,
  ruleKey,
  type WorkspaceState,
} from "./state.ts";

/**
 * Decides a command against the folded state.
 * @returns the events to append, in order (possibly none).
 * @throws WorkspaceNotFound, ActionNotFound, ActionNotPending, DependenciesUndecided, ReasonRequired,
 *   WorkspaceLatched, DuplicateLocalId, DuplicateObservationRequest, UnknownBinding,
 *   UnknownDependency, InvalidField, ActionStateConflict, ActionNotRevertible, UnknownActionKind,
 *   ActionKindNotAutoApprovable, ActionKindsNotPublished, DescriptionNotShown,
 *   DescriptionDigestMismatch, ApprovalNotWithdrawable. A WorkspaceLatched thrown for a submission carries
 *   the ActionRefused event to record in `recorded` (see ApprovalError.recorded).
 */
export function decide(command: Command, state: WorkspaceState): PlannedEvent[] {
  if (!state.exists) throw new WorkspaceNotFound(state.workspaceId || "(unknown)");
  switch (command.type) {
    case "RecordObservation":
      return recordObservation(command, state);
    case "SubmitAction":
      return submitAction(command, state);
    case "Approve":
      return approve(command, state);
    case "WithdrawApproval":
      return withdrawApproval(command, state);
    case "Reject":
      return reject(command, state);
    case "AutoApproveNext":
      return autoApproveNext(command, state);
    case "ClaimApply":
      return claimApply(command, state);
    case "ExpireDue":
      if (!Number.isFinite(command.ttlMs) || command.ttlMs <= 0)
        throw new InvalidField("ttl_ms", "give a positive time-to-live in milliseconds");
      return expireDue(state, command.ttlMs, command.nowMs);
    case "ClaimRun":
      return claimRun(command, state);
    case "ReleaseClaim":
      return releaseClaim(command, state);
    case "RecordApplied":
      return recordApplied(command, state);
    case "RecordApplyFailed":
      return recordApplyFailed(command, state);
    case "SetAutoApprovalRule":
      return setRule(command, state);
    case "RequestRevert":
      return requestRevert(command, state);
    case "RemoveBinding":
      return removeBinding(command, state);
  }
}

/** True when the workspace read restricted data (the latch is set for good). */
export function isLatched(state: WorkspaceState): boolean {
  return state.latchedBindings.length > 0;
}

/**
 * True when the latch forbids a write through `binding` (docs/architecture.md "The approval contract"): the
 * workspace is latched and either the binding did not read the restricted data, or the write is
 * an egress write (`description.egress`), which is refused on every binding.
 */
export function latchForbids(state: WorkspaceState, binding: string, egress = false): boolean {
  return isLatched(state) && (egress || !state.latchedBindings.includes(binding));
}

/**
 * The latch's refusal of a write through `binding`, or undefined when the latch allows it.
 * @param egress the write's `description.egress`.
 * @param actionId the pending action an approval names (0 for a submission); used in the message.
 */
export function latchRefusal(
  state: WorkspaceState,
  binding: string,
  egress: boolean,
  actionId = 0,
): WorkspaceLatched | undefined {
  if (!latchForbids(state, binding, egress)) return undefined;
  return new WorkspaceLatched(binding, [...state.latchedBindings], egress, actionId);
}

/** @param grant the caller's grant (from its token), when it must still stand. */
function requireBinding(state: WorkspaceState, binding: string, grant?: number): void {
  const current = state.bindings.get(binding);
  if (grant !== undefined && current?.grant !== grant) throw new UnknownBinding(binding, grant);
  if (!current) throw new UnknownBinding(binding);
}

const APPROVED_STATES = new Set([
  ActionStatus.ACTION_STATUS_APPROVED,
  ActionStatus.ACTION_STATUS_APPLYING,
  ActionStatus.ACTION_STATUS_APPLIED,
  ActionStatus.ACTION_STATUS_FAILED,
]);

/** @param approving true for an approval: finding the action approved already means a lost race. */
function requirePending(a: ActionState, approving: boolean): void {
  if (a.status !== ActionStatus.ACTION_STATUS_PENDING) {
    throw new ActionNotPending(a.id, describeDecided(a), approving && APPROVED_STATES.has(a.status));
  }
}

/**
 * The observation a retried AuthorizeObservation (same binding, execution and request id) recorded,
 * or undefined when none did (or the request has no id).
 */
export function recordedObservationId(
  state: WorkspaceState,
  c: Pick<RecordObservation, "binding" | "executionId" | "requestId">,
): number | undefined {
  if (!c.requestId) return undefined;
  return state.observationRequests.get(observationRequestKey(c.binding, c.executionId, c.requestId));
}

function recordObservation(c: RecordObservation, state: WorkspaceState): PlannedEvent[] {
  requireBinding(state, c.binding, c.grant);
  if (!c.description)
    throw new InvalidField("description", "an observation needs a description; set description.title");
  const earlier = recordedObservationId(state, c);
  if (earlier !== undefined) {
    const recorded = state.observations.get(earlier)?.description;
    const same =
      recorded !== undefined &&
      JSON.stringify(ObservationDescription.toJSON(recorded)) ===
        JSON.stringify(ObservationDescription.toJSON(c.description));
    if (same) return []; // a retry: the observation is recorded already
    throw new DuplicateObservationRequest(c.binding, c.requestId, earlier);
  }
  const id = state.revision + 1;
  const events = [
    planned(
      "ObservationRecorded",
      {
        binding: c.binding,
        description: c.description,
        executionId: c.executionId,
        requestId: c.requestId,
      },
      SERVICE_ACTOR,
    ),
  ];
  if (c.description.containsRestrictedData && !state.latchedBindings.includes(c.binding)) {
    events.push(planned("RestrictedDataLatched", { observationId: id, binding: c.binding }, SERVICE_ACTOR));
  }
  return events;
}

/**
 * What differs between a recorded action and a new submission under its local id ("" when the
 * submission is a retry of it: same execution, identical description and payload).
 */
export function submissionDifference(a: ActionState, c: SubmitAction): string {
  const differs: string[] = [];
  const json = (d: ActionDescription | undefined) => JSON.stringify(d && ActionDescription.toJSON(d));
  if (json(a.description) !== json(c.description)) differs.push("description");
  if (a.payloadJson !== c.payloadJson) differs.push("payload");
  if (a.executionId !== c.executionId) differs.push("execution");
  return differs.join(" and ");
}

function submitAction(c: SubmitAction, state: WorkspaceState): PlannedEvent[] {
  if (c.localId && c.description && state.bindings.has(c.binding)) {
    const earlier = state.localIds.get(localIdKey(c.binding, c.localId));
    const a = earlier === undefined ? undefined : state.actions.get(earlier);
    // A retry of a recorded submission (its reply was lost): the recorded action stands.
    if (a && submissionDifference(a, c) === "") return [];
  }
  return stageAction(c, state);
}

/** Validates and stages a new action (no retry recognition: RequestRevert submits through this). */
function stageAction(c: SubmitAction, state: WorkspaceState): PlannedEvent[] {
  if (!c.localId) throw new InvalidField("local_id", "set a gatekeeper-local id, unique per binding");
  if (!c.description)
    throw new InvalidField("description", "an action needs a description; set description.title");
  requireBinding(state, c.binding, c.grant);
  const refusal = latchRefusal(state, c.binding, c.description.egress === true);
  if (refusal) {
    // Refused, and recorded so the log shows what was tried and why (nothing is staged).
    refusal.recorded = [
      planned(
        "ActionRefused",
        {
          binding: c.binding,
          localId: c.localId,
          description: c.description,
          reason: refusal.message,
          executionId: c.executionId,
        },
        SERVICE_ACTOR,
      ),
    ];
    throw refusal;
  }
  const existing = state.localIds.get(localIdKey(c.binding, c.localId));
  if (existing !== undefined) {
    const a = state.actions.get(existing);
    throw new DuplicateLocalId(c.binding, c.localId, existing, a ? submissionDifference(a, c) : "");
  }
  const dependsOn: number[] = [];
  for (const local of c.description.dependsOn) {
    const id = state.localIds.get(localIdKey(c.binding, local));
    if (id === undefined) throw new UnknownDependency(c.binding, local);
    if (!dependsOn.includes(id)) dependsOn.push(id);
  }
  const id = state.revision + 1;
  const events = [
    planned(
      "ActionSubmitted",
      {
        binding: c.binding,
        localId: c.localId,
        description: c.description,
        dependsOn,
        payloadJson: c.payloadJson,
        executionId: c.executionId,
      },
      SERVICE_ACTOR,
    ),
  ];
  const dead = dependsOn.find((d) => {
    const s = state.actions.get(d)?.status;
    return s === ActionStatus.ACTION_STATUS_REJECTED || s === ActionStatus.ACTION_STATUS_FAILED;
  });
  if (dead !== undefined) {
    events.push(
      planned(
        "ActionRejected",
        { actionId: id, decidedBy: CASCADE_ACTOR, reason: cascadeReason(dead), cascadedFrom: dead },
        CASCADE_ACTOR,
      ),
    );
  }
  return events;
}

/**
 * The ordered approval plan: requested ids plus (with includeDependencies) their undecided
 * dependencies, in submission order. Throws when any of them may not be approved.
 */
function approvalPlan(c: Approve, state: WorkspaceState): number[] {
  if (!c.decidedBy) throw new InvalidField("decided_by", 'say who decides, e.g. "user:alice"');
  if (c.actionIds.length === 0) throw new InvalidField("action_ids", "name at least one action to approve");
  const plan = new Set<number>();
  for (const id of c.actionIds) {
    const a = requireAction(state, id);
    requirePending(a, true);
    plan.add(id);
  }
  // Undecided dependencies (transitively) not in the plan.
  const missing = new Set<number>();
  const visit = (a: ActionState) => {
    for (const d of a.dependsOn) {
      const dep = state.actions.get(d);
      if (!dep || dep.status !== ActionStatus.ACTION_STATUS_PENDING || plan.has(d) || missing.has(d))
        continue;
      missing.add(d);
      visit(dep);
    }
  };
  for (const id of [...plan]) visit(requireAction(state, id));
  if (missing.size > 0) {
    if (!c.includeDependencies) {
      for (const id of c.actionIds) {
        const undecided = [...missing].filter((m) => dependsTransitively(state, id, m)).sort((x, y) => x - y);
        if (undecided.length > 0) throw new DependenciesUndecided(id, undecided);
      }
    }
    for (const m of missing) plan.add(m);
  }
  const ordered = [...plan].sort((x, y) => x - y);
  for (const id of ordered) {
    const a = requireAction(state, id);
    const refusal = latchRefusal(state, a.binding, a.description?.egress === true, a.id);
    if (refusal) throw refusal;
  }
  return ordered;
}

function dependsTransitively(state: WorkspaceState, from: number, target: number): boolean {
  const stack = [...(state.actions.get(from)?.dependsOn ?? [])];
  const seen = new Set<number>();
  while (stack.length > 0) {
    const d = stack.pop() as number;
    if (d === target) return true;
    if (seen.has(d)) continue;
    seen.add(d);
    stack.push(...(state.actions.get(d)?.dependsOn ?? []));
  }
  return false;
}

function approve(c: Approve, state: WorkspaceState): PlannedEvent[] {
  const plan = approvalPlan(c, state);
  const digests = c.descriptionDigests;
  const bound = digests !== undefined && digests.size > 0;
  if (bound) {
    for (const id of plan) {
      const sent = digests.get(id);
      if (sent === undefined || sent === "") throw new DescriptionNotShown(id);
      if (sent !== actionDigest(state, requireAction(state, id))) throw new DescriptionDigestMismatch(id);
    }
  }
  return plan.map((id) =>
    planned(
      "ActionApproved",
      { actionId: id, decidedBy: c.decidedBy, descriptionDigest: bound ? (digests.get(id) ?? "") : "" },
      c.decidedBy,
    ),
  );
}

/**
 * Withdraws approvals not yet claimed: the named actions and every APPROVED action depending on
 * one of them (transitively), in submission order. All or nothing.
 */
function withdrawApproval(c: WithdrawApproval, state: WorkspaceState): PlannedEvent[] {
  if (!c.withdrawnBy) throw new InvalidField("withdrawn_by", 'say who withdraws, e.g. "user:alice"');
  if (c.actionIds.length === 0) throw new InvalidField("action_ids", "name at least one approved action");
  const named = new Set<number>();
  for (const id of c.actionIds) {
    const a = requireAction(state, id);
    if (a.status === ActionStatus.ACTION_STATUS_APPLYING)
      throw new ApprovalNotWithdrawable(
        id,
        "is already claimed for apply (applying); it cannot be withdrawn",
      );
    if (a.status === ActionStatus.ACTION_STATUS_PENDING)
      throw new ApprovalNotWithdrawable(id, "is pending (not approved); there is no approval to withdraw");
    if (a.status !== ActionStatus.ACTION_STATUS_APPROVED)
      throw new ApprovalNotWithdrawable(
        id,
        `${describeDecided(a)}; only an approval not yet claimed for apply can be withdrawn`,
      );
    named.add(id);
  }
  // Approved dependents (transitively) would otherwise wait on a pending dependency for ever.
  // Map order is submission order and a dependency is always submitted before its dependents.
  const withdrawnWith = new Map<number, number>();
  for (const a of state.actions.values()) {
    if (named.has(a.id) || a.status !== ActionStatus.ACTION_STATUS_APPROVED) continue;
    const cause = a.dependsOn.find((d) => named.has(d) || withdrawnWith.has(d));
    if (cause !== undefined)
      withdrawnWith.set(a.id, named.has(cause) ? cause : (withdrawnWith.get(cause) as number));
  }
  const ids = [...named, ...withdrawnWith.keys()].sort((x, y) => x - y);
  return ids.map((id) =>
    planned(
      "ActionApprovalWithdrawn",
      {
        actionId: id,
        withdrawnBy: c.withdrawnBy,
        reason: c.reason,
        withdrawnWith: withdrawnWith.get(id) ?? 0,
      },
      c.withdrawnBy,
    ),
  );
}

function reject(c: Reject, state: WorkspaceState): PlannedEvent[] {
  if (!c.decidedBy) throw new InvalidField("decided_by", 'say who decides, e.g. "user:alice"');
  if (!c.reason.trim()) throw new ReasonRequired();
  const a = requireAction(state, c.actionId);
  requirePending(a, false);
  return [
    planned(
      "ActionRejected",
      { actionId: a.id, decidedBy: c.decidedBy, reason: c.reason, cascadedFrom: 0 },
      c.decidedBy,
    ),
    ...cascadeRejections(state, [a.id]),
  ];
}

/** True when rules may approve `a` without a person (docs/architecture.md "The approval contract"). */
export function autoApprovable(state: WorkspaceState, a: ActionState): boolean {
  const tag = a.description?.actionKind?.tag;
  return (
    !isLatched(state) &&
    a.description?.autoApprovable === true &&
    !!tag &&
    state.rules.has(ruleKey(a.binding, tag))
  );
}

function autoApproveNext(c: AutoApproveNext, state: WorkspaceState): PlannedEvent[] {
  if (isLatched(state)) return [];
  for (const a of state.actions.values()) {
    if (a.binding !== c.binding || a.status !== ActionStatus.ACTION_STATUS_PENDING) continue;
    // The first pending action of the binding decides: approve it, or stop (never skip ahead).
    if (!autoApprovable(state, a)) return [];
    const undecided = a.dependsOn.some(
      (d) => state.actions.get(d)?.status === ActionStatus.ACTION_STATUS_PENDING,
    );
    if (undecided) return [];
    const by = `rule:${a.binding}/${a.description?.actionKind?.tag ?? ""}`;
    return [planned("ActionApproved", { actionId: a.id, decidedBy: by, descriptionDigest: "" }, by)];
  }
  return [];
}

function setRule(c: SetAutoApprovalRule, state: WorkspaceState): PlannedEvent[] {
  if (!c.actionKindTag)
    throw new InvalidField("action_kind_tag", 'set the action kind tag, e.g. "mcp.tool.create_entities"');
  if (!c.setBy) throw new InvalidField("set_by", 'say who sets the rule, e.g. "user:alice"');
  if (c.enabled) requireRuleCanFire(state, c.binding, c.actionKindTag);
  else if (!state.rules.has(ruleKey(c.binding, c.actionKindTag))) {
    // Turning off a rule that is not on would record an event that changes nothing and reads as
    // if a rule had existed: refused, naming the binding's rules that are on.
    requireBinding(state, c.binding);
    const on = [...state.rules.values()].filter((r) => r.binding === c.binding).map((r) => r.actionKindTag);
    throw new RuleNotFound(c.binding, c.actionKindTag, on);
  }
  return [
    planned(
      "AutoApprovalRuleSet",
      { binding: c.binding, actionKindTag: c.actionKindTag, enabled: c.enabled, setBy: c.setBy },
      c.setBy,
    ),
  ];
}

/**
 * The tags of `binding` a rule may enable (published auto-approvable), or undefined when the
 * binding's kinds were not published (introduced before gatekeepers published them).
 * @throws UnknownBinding.
 */
export function autoApprovableTags(state: WorkspaceState, binding: string): string[] | undefined {
  const b = state.bindings.get(binding);
  if (!b) throw new UnknownBinding(binding);
  return b.actionKinds?.filter((k) => k.autoApprovable).map((k) => k.tag);
}

/**
 * Refuses a rule that could never fire: the tag is not one of the binding's published action
 * kinds, or that kind can never be auto-approved, or the binding's kinds were never published.
 * @throws UnknownBinding, ActionKindsNotPublished, UnknownActionKind, ActionKindNotAutoApprovable.
 */
function requireRuleCanFire(state: WorkspaceState, binding: string, tag: string): void {
  const valid = autoApprovableTags(state, binding);
  if (valid === undefined) throw new ActionKindsNotPublished(binding, tag);
  const kind = state.bindings.get(binding)?.actionKinds?.find((k) => k.tag === tag);
  if (!kind) throw new UnknownActionKind(binding, tag, valid);
  if (!kind.autoApprovable)
    throw new ActionKindNotAutoApprovable(binding, tag, kind.notAutoApprovableReason, valid);
}

/** Why an applied action's latest revert blocks a new one, or undefined when it does not. */
function revertBlocks(revert: ActionState): string | undefined {
  const by = `it was already reverted by action ${revert.id}`;
  switch (revert.status) {
    case ActionStatus.ACTION_STATUS_PENDING:
      return `${by}, which is pending (approve or reject action ${revert.id})`;
    case ActionStatus.ACTION_STATUS_APPROVED:
    case ActionStatus.ACTION_STATUS_APPLYING:
      return `${by}, which is approved and being applied`;
    case ActionStatus.ACTION_STATUS_APPLIED:
      return `${by}, which is applied`;
    case ActionStatus.ACTION_STATUS_FAILED:
      return revert.outcomeUnknown
        ? `${by}, whose apply ended with an unknown outcome (check the external system first)`
        : undefined;
    default:
      return undefined; // rejected: the revert never happened, a new one may be asked for
  }
}

/**
 * The action `actionId` when a revert of it may be requested: it is applied, and no earlier revert
 * of it is pending, approved, applied or of unknown outcome (a rejected or failed revert allows a
 * new request).
 * @throws ActionNotFound; ActionNotRevertible saying why and what to do instead.
 */
export function revertible(state: WorkspaceState, actionId: number): ActionState {
  const a = requireAction(state, actionId);
  switch (a.status) {
    case ActionStatus.ACTION_STATUS_APPLIED:
      break;
    case ActionStatus.ACTION_STATUS_PENDING:
      throw new ActionNotRevertible(a.id, "it is still pending, so it never took effect (reject it instead)");
    case ActionStatus.ACTION_STATUS_APPROVED:
    case ActionStatus.ACTION_STATUS_APPLYING:
      throw new ActionNotRevertible(a.id, "it is approved but not applied yet (wait for its outcome)");
    case ActionStatus.ACTION_STATUS_REJECTED:
      throw new ActionNotRevertible(a.id, "it was rejected, so it never took effect");
    case ActionStatus.ACTION_STATUS_FAILED:
      throw new ActionNotRevertible(
        a.id,
        a.outcomeUnknown
          ? "its apply ended with an unknown outcome (check the external system and undo it there if it took effect)"
          : "its apply failed, so it never took effect",
      );
    default:
      throw new ActionNotRevertible(a.id, "it is not applied");
  }
  if (state.bindings.get(a.binding)?.grant !== a.grant) {
    throw new ActionNotRevertible(
      a.id,
      `its binding ${a.binding} was removed; undo it in the external system, or introduce the resource again and write the change anew`,
    );
  }
  const previous = a.revertActionId ? state.actions.get(a.revertActionId) : undefined;
  const blocked = previous && revertBlocks(previous);
  if (blocked) throw new ActionNotRevertible(a.id, blocked);
  return a;
}

function requestRevert(c: RequestRevert, state: WorkspaceState): PlannedEvent[] {
  if (!c.requestedBy) throw new InvalidField("requested_by", 'say who asks, e.g. "user:alice"');
  const original = revertible(state, c.actionId);
  if (!c.description) {
    throw new InvalidField(
      "description",
      "the gatekeeper's revert needs a description; set description.title",
    );
  }
  const claimed = c.description.implementsRevert;
  if (claimed !== 0 && claimed !== original.id) {
    throw new InvalidField(
      "description.implements_revert",
      `the gatekeeper's revert says it reverts action ${claimed}, not action ${original.id}; leave it 0 or set ${original.id}`,
    );
  }
  const revertId = state.revision + 1;
  const events = stageAction(
    {
      type: "SubmitAction",
      binding: original.binding,
      localId: c.localId,
      description: { ...c.description, implementsRevert: original.id },
      payloadJson: c.payloadJson,
      executionId: "",
    },
    state,
  );
  events.push(
    planned(
      "ActionReverted",
      { actionId: original.id, revertActionId: revertId, requestedBy: c.requestedBy },
      c.requestedBy,
    ),
  );
  return events;
}
