/** Proto records (ts-proto) → the gateway contract's JSON shapes. Pure. */
import type {
  Action,
  ActionStatus,
  Caller,
  LogEntry,
  LogResponse,
  Observation,
  Refusal,
} from "@gatehouse/gateway-contract";
import {
  type ActionRecord,
  actionStatusToJSON,
  Delivery,
  type LogView,
  type ObservationRecord,
  type LogEntry as ProtoLogEntry,
  type ActionStatus as ProtoStatus,
  type RefusalRecord,
} from "@gatehouse/proto";

const STATUSES: ReadonlySet<string> = new Set<ActionStatus>([
  "pending",
  "approved",
  "applying",
  "applied",
  "failed",
  "rejected",
]);

/** "ACTION_STATUS_APPLIED" → "applied". @throws Error for a status the contract does not name (a projection bug). */
function statusOf(status: ProtoStatus): ActionStatus {
  const name = actionStatusToJSON(status)
    .replace(/^ACTION_STATUS_/, "")
    .toLowerCase();
  if (!STATUSES.has(name))
    throw new Error(
      `an action has status ${actionStatusToJSON(status)}, which the gateway contract does not name`,
    );
  return name as ActionStatus;
}

function caller(c: { kind: string; id: string } | undefined): Caller {
  return { kind: c?.kind ?? "", id: c?.id ?? "" };
}

/** An ActionRecord as the contract's {@link Action}. */
export function toAction(a: ActionRecord): Action {
  const d = a.description;
  return {
    id: a.id,
    workspaceId: a.workspaceId,
    binding: a.binding,
    localId: a.localId,
    title: d?.title ?? "",
    description: d?.description ?? "",
    descriptionIsComplete: d?.descriptionIsComplete ?? false,
    delivery: d?.delivery === Delivery.DELIVERY_AWAIT ? "await" : "simulate",
    dependsOn: [...a.dependsOn],
    status: statusOf(a.status),
    caller: caller(a.caller),
    chatStartedBy: a.chatStartedBy,
    executionId: a.executionId,
    submittedAt: a.submittedAt,
    decidedBy: a.decidedBy,
    decidedAt: a.decidedAt,
    reason: a.reason,
    cascadedFrom: a.cascadedFrom,
    resultJson: a.resultJson,
    outcomeUnknown: a.outcomeUnknown,
    actionKind: d?.actionKind?.tag ? { tag: d.actionKind.tag, label: d.actionKind.label } : null,
    autoApprovable: d?.autoApprovable ?? false,
    egress: d?.egress ?? false,
    implementsRevert: d?.implementsRevert ?? 0,
    lastRevision: a.lastRevision,
    summary: d?.summary ?? "",
    fields: (d?.fields ?? []).map((f) => ({ name: f.name, value: f.value })),
    risks: (d?.risks ?? []).map((r) => ({ kind: r.kind, reason: r.reason })),
    preflightWarnings: [...(d?.preflightWarnings ?? [])],
    preview: d?.preview ?? "",
    descriptionDigest: a.descriptionDigest,
    withdrawnBy: a.withdrawnBy,
  };
}

/** An ObservationRecord as the contract's {@link Observation}. */
export function toObservation(o: ObservationRecord): Observation {
  const d = o.description;
  return {
    id: o.id,
    binding: o.binding,
    title: d?.title ?? "",
    description: d?.description ?? "",
    kind: d?.kind ?? "",
    page: d?.page ?? 0,
    containsRestrictedData: d?.containsRestrictedData ?? false,
    caller: caller(o.caller),
    chatStartedBy: o.chatStartedBy,
    recordedAt: o.recordedAt,
    executionId: o.executionId,
  };
}

/** A RefusalRecord as the contract's {@link Refusal}. */
export function toRefusal(r: RefusalRecord): Refusal {
  return {
    id: r.id,
    binding: r.binding,
    localId: r.localId,
    title: r.description?.title ?? "",
    description: r.description?.description ?? "",
    reason: r.reason,
    caller: caller(r.caller),
    chatStartedBy: r.chatStartedBy,
    refusedAt: r.refusedAt,
    executionId: r.executionId,
  };
}

/** One log entry; undefined for an entry of a kind this gateway does not know. */
export function toLogEntry(e: ProtoLogEntry): LogEntry | undefined {
  switch (e.entry?.$case) {
    case "observation":
      return { id: e.id, kind: "observation", observation: toObservation(e.entry.observation) };
    case "action":
      return { id: e.id, kind: "action", action: toAction(e.entry.action) };
    case "refusal":
      return { id: e.id, kind: "refusal", refusal: toRefusal(e.entry.refusal) };
    default:
      return undefined;
  }
}

/** A LogView as the contract's {@link LogResponse}; `headRevision` comes from the live view. */
export function toLogResponse(view: LogView, headRevision: number): LogResponse {
  return {
    workspaceId: view.workspaceId,
    revision: view.revision,
    headRevision,
    latched: view.latched,
    rules: view.rules.map((r) => ({ binding: r.binding, actionKindTag: r.actionKindTag })),
    entries: view.entries.map(toLogEntry).filter((e): e is LogEntry => e !== undefined),
  };
}
