/** Table rows computed from a folded WorkspaceState (the write side of the projection). */
import { toLogEntry, type WorkspaceState } from "@gatehouse/approval-core";
import { type AutoApprovalRule, type Caller, LogEntry, LogView } from "@gatehouse/proto";
import type { EntryRow, WorkspaceRow } from "./db.ts";

/** "<kind>:<id>" of a caller, "" when none. */
function callerKey(caller: Caller | undefined): string {
  return caller ? `${caller.kind}:${caller.id}` : "";
}

/** The row of log entry `id` as the state has it now, or undefined when the state has no such entry. */
export function entryRow(workspaceId: string, state: WorkspaceState, id: number): EntryRow | undefined {
  const entry = toLogEntry(state, id);
  if (!entry) return undefined;
  const bytes = LogEntry.encode(entry).finish();
  const a = state.actions.get(id);
  if (a)
    return {
      workspaceId,
      logId: id,
      kind: "action",
      status: a.status,
      executionId: a.executionId,
      lastRevision: a.lastRevision,
      callerId: callerKey(a.caller),
      entry: bytes,
    };
  const o = state.observations.get(id);
  if (o)
    return {
      workspaceId,
      logId: id,
      kind: "observation",
      status: null,
      executionId: o.executionId,
      lastRevision: id,
      callerId: callerKey(o.caller),
      entry: bytes,
    };
  const r = state.refusals.get(id) as NonNullable<ReturnType<typeof state.refusals.get>>;
  return {
    workspaceId,
    logId: id,
    kind: "refusal",
    status: null,
    executionId: r.executionId,
    lastRevision: id,
    callerId: callerKey(r.caller),
    entry: bytes,
  };
}

/** The enabled rules sorted by (binding, tag), as toLogView orders them. */
export function sortedRules(state: WorkspaceState): AutoApprovalRule[] {
  const cmp = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);
  return [...state.rules.values()]
    .map((r) => ({ binding: r.binding, actionKindTag: r.actionKindTag }))
    .sort((x, y) =>
      x.binding === y.binding ? cmp(x.actionKindTag, y.actionKindTag) : cmp(x.binding, y.binding),
    );
}

/** The workspace row as the state has it now. */
export function workspaceRow(workspaceId: string, state: WorkspaceState): WorkspaceRow {
  const head: LogView = {
    workspaceId: state.workspaceId,
    entries: [],
    rules: sortedRules(state),
    latched: false,
    revision: 0,
  };
  return {
    workspaceId,
    revision: state.revision,
    latched: state.latchedBindings.length > 0,
    exists: state.exists,
    rules: LogView.encode(head).finish(),
  };
}

/** Ids of every entry whose caller is agent chat `chatId` (their chatStartedBy changes with ChatStarted). */
export function entriesOfChat(state: WorkspaceState, chatId: string): number[] {
  const ids: number[] = [];
  const mine = (c: Caller | undefined) => c?.kind === "agent" && c.id === chatId;
  for (const a of state.actions.values()) if (mine(a.caller)) ids.push(a.id);
  for (const o of state.observations.values()) if (mine(o.caller)) ids.push(o.id);
  for (const r of state.refusals.values()) if (mine(r.caller)) ids.push(r.id);
  return ids;
}

/** Every entry id of the state (WorkspaceCreated changes their workspaceId). */
export function allEntryIds(state: WorkspaceState): number[] {
  return [...state.actions.keys(), ...state.observations.keys(), ...state.refusals.keys()];
}
