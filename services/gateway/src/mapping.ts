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
  Delivery,
  type LogView,
  type ObservationRecord,
  type LogEntry as ProtoLogEntry,
  ActionStatus as ProtoStatus,
  type RefusalRecord,
} from "@gatehouse/proto";

const STATUS: Record<number, ActionStatus> = {
  [ProtoStatus.ACTION_STATUS_PENDING]: "pending",
  [ProtoStatus.ACTION_STATUS_APPROVED]: "approved",
  [ProtoStatus.ACTION_STATUS_APPLYING]: "applying",
  [ProtoStatus.ACTION_STATUS_APPLIED]: "applied",
  [ProtoStatus.ACTION_STATUS_FAILED]: "failed",
  [ProtoStatus.ACTION_STATUS_REJECTED]: "rejected",
};

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
    status: STATUS[a.status] ?? "pending",
    caller: caller(a.caller),
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
