/** Pure helpers of the log page: what an entry is about, and the filters. */
import type { LogEntry } from "@gatehouse/gateway-contract";

/** Log filters; empty strings mean "any". */
export interface LogFilters {
  kind: "" | LogEntry["kind"];
  binding: string;
  text: string;
}

/** The binding an entry concerns. */
export function entryBinding(entry: LogEntry): string {
  if (entry.kind === "observation") return entry.observation.binding;
  if (entry.kind === "action") return entry.action.binding;
  return entry.refusal.binding;
}

function searchable(entry: LogEntry): string {
  if (entry.kind === "observation") {
    const o = entry.observation;
    return [o.title, o.description, o.kind, o.caller.kind, o.caller.id].join("\n");
  }
  if (entry.kind === "action") {
    const a = entry.action;
    return [
      a.title,
      a.description,
      a.reason,
      a.status,
      a.actionKind?.label ?? "",
      a.caller.kind,
      a.caller.id,
    ].join("\n");
  }
  const r = entry.refusal;
  return [r.title, r.description, r.reason, r.caller.kind, r.caller.id].join("\n");
}

/** Whether an entry passes the filters (text: case-insensitive substring of its texts). */
export function entryMatches(entry: LogEntry, filters: LogFilters): boolean {
  if (filters.kind && entry.kind !== filters.kind) return false;
  if (filters.binding && entryBinding(entry) !== filters.binding) return false;
  const text = filters.text.trim().toLowerCase();
  return text === "" || searchable(entry).toLowerCase().includes(text);
}
