/** Pure merging of inbox reads, so a slow, older read never replaces a newer one. */
import type { Action, InboxWorkspace } from "@gatehouse/gateway-contract";

/**
 * Merges a read of every workspace: the read's list wins (workspaces no longer visible disappear),
 * except where the current copy of a workspace was read at a higher revision.
 */
export function mergeAll(current: InboxWorkspace[] | null, incoming: InboxWorkspace[]): InboxWorkspace[] {
  const byId = new Map((current ?? []).map((w) => [w.id, w]));
  return incoming.map((w) => {
    const mine = byId.get(w.id);
    return mine && mine.revision > w.revision ? mine : w;
  });
}

/** Merges a read of one workspace: replaces it unless the current copy is newer; appends a new one. */
export function mergeOne(current: InboxWorkspace[] | null, incoming: InboxWorkspace): InboxWorkspace[] {
  const list = current ?? [];
  const index = list.findIndex((w) => w.id === incoming.id);
  if (index < 0) return [...list, incoming];
  if ((list[index]?.revision ?? 0) > incoming.revision) return list;
  return list.map((w, i) => (i === index ? incoming : w));
}

/**
 * Applies a decision's answer in place (statuses update at once; the list order stays until the
 * next read moves decided actions from `pending` to `recent`).
 */
export function applyActions(current: InboxWorkspace[] | null, changed: Action[]): InboxWorkspace[] | null {
  if (!current || changed.length === 0) return current;
  const byKey = new Map(changed.map((a) => [`${a.workspaceId}:${a.id}`, a]));
  const swap = (a: Action) => byKey.get(`${a.workspaceId}:${a.id}`) ?? a;
  return current.map((w) => ({ ...w, pending: w.pending.map(swap), recent: w.recent.map(swap) }));
}
