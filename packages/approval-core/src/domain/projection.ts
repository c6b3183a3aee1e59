/**
 * The action-log view of a folded WorkspaceState, as the proto messages of approval.proto.
 * Deterministic: equal states give equal messages, hence equal bytes (LogView.encode).
 */
import type {
  ActionRecord,
  Caller,
  LogEntry,
  LogView,
  ObservationRecord,
  RefusalRecord,
} from "@gatehouse/proto";
import { descriptionDigest } from "./digest.ts";
import type { ActionState, ObservationState, RefusalState, WorkspaceState } from "./state.ts";

/**
 * Who started the chat of an agent caller: "user:<subject>" from its ChatStarted, "" for any other
 * caller or a chat with no ChatStarted (sessions before it was recorded).
 */
export function chatStartedBy(state: WorkspaceState, caller: Caller | undefined): string {
  return caller?.kind === "agent" ? (state.chats.get(caller.id) ?? "") : "";
}

/** The ActionRecord of one folded action. */
export function toActionRecord(state: WorkspaceState, a: ActionState): ActionRecord {
  return {
    id: a.id,
    workspaceId: state.workspaceId,
    binding: a.binding,
    localId: a.localId,
    description: a.description,
    status: a.status,
    dependsOn: [...a.dependsOn],
    caller: a.caller,
    submittedAt: a.submittedAt,
    decidedBy: a.decidedBy,
    decidedAt: a.decidedAt,
    reason: a.reason,
    cascadedFrom: a.cascadedFrom,
    resultJson: a.resultJson,
    outcomeUnknown: a.outcomeUnknown,
    executionId: a.executionId,
    lastRevision: a.lastRevision,
    chatStartedBy: chatStartedBy(state, a.caller),
    descriptionDigest: actionDigest(state, a),
    withdrawnBy: a.withdrawnBy ?? "",
  };
}

/** The action's description digest (descriptionDigest), computed once and kept on the state. */
export function actionDigest(state: WorkspaceState, a: ActionState): string {
  a.digest ??= descriptionDigest(state.workspaceId, a.id, a.description);
  return a.digest;
}

/** The ObservationRecord of one folded observation. */
export function toObservationRecord(state: WorkspaceState, o: ObservationState): ObservationRecord {
  return {
    id: o.id,
    binding: o.binding,
    description: o.description,
    caller: o.caller,
    recordedAt: o.recordedAt,
    executionId: o.executionId,
    chatStartedBy: chatStartedBy(state, o.caller),
  };
}

/** The RefusalRecord of one refused write. */
export function toRefusalRecord(state: WorkspaceState, r: RefusalState): RefusalRecord {
  return {
    id: r.id,
    binding: r.binding,
    localId: r.localId,
    description: r.description,
    reason: r.reason,
    caller: r.caller,
    refusedAt: r.refusedAt,
    executionId: r.executionId,
    chatStartedBy: chatStartedBy(state, r.caller),
  };
}

/** The log entry with log id `id`, or undefined when no observation, action or refusal has it. */
export function toLogEntry(state: WorkspaceState, id: number): LogEntry | undefined {
  const a = state.actions.get(id);
  if (a) return { id, entry: { $case: "action", action: toActionRecord(state, a) } };
  const o = state.observations.get(id);
  if (o) return { id, entry: { $case: "observation", observation: toObservationRecord(state, o) } };
  const r = state.refusals.get(id);
  if (r) return { id, entry: { $case: "refusal", refusal: toRefusalRecord(state, r) } };
  return undefined;
}

/**
 * The LogView: observations, actions and refused writes in log-id order, the enabled rules sorted
 * by (binding, tag), the latch flag and the revision of the last folded event.
 */
export function toLogView(state: WorkspaceState): LogView {
  const ids = [...state.actions.keys(), ...state.observations.keys(), ...state.refusals.keys()].sort(
    (x, y) => x - y,
  );
  const rules = [...state.rules.values()]
    .map((r) => ({ binding: r.binding, actionKindTag: r.actionKindTag }))
    .sort((x, y) =>
      x.binding === y.binding ? cmp(x.actionKindTag, y.actionKindTag) : cmp(x.binding, y.binding),
    );
  return {
    workspaceId: state.workspaceId,
    entries: ids.map((id) => toLogEntry(state, id) as LogEntry),
    rules,
    latched: state.latchedBindings.length > 0,
    revision: state.revision,
  };
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
