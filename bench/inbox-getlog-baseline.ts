/**
 * The inbox as the gateway computed it before the read model: from one
 * workspace's whole log (GetLog). Kept only as the baseline of bench/inbox.ts.
 */
import {
  type Action,
  INBOX_RECENT,
  type InboxWorkspace,
  type LogResponse,
} from "@gatehouse/gateway-contract";

/** Actions of a log, in id (submission) order. */
export function actionsOf(log: LogResponse): Action[] {
  return log.entries.flatMap((e) => (e.kind === "action" ? [e.action] : []));
}

/**
 * The inbox view of one workspace from its log: pending in submission order, then the most recently
 * changed decided ones (the route adds the workspace's pending connection requests).
 */
export function inboxWorkspace(
  workspace: { id: string; name: string },
  log: LogResponse,
): Omit<InboxWorkspace, "connectionRequests"> {
  const actions = actionsOf(log);
  const pending = actions.filter((a) => a.status === "pending");
  const recent = actions
    .filter((a) => a.status !== "pending")
    .sort((a, b) => b.lastRevision - a.lastRevision || b.id - a.id)
    .slice(0, INBOX_RECENT);
  return {
    id: workspace.id,
    name: workspace.name,
    revision: log.revision,
    latched: log.latched,
    pending,
    recent,
  };
}
