/** Read views the web app needs, computed from one workspace's log (pure). */
import {
  type Action,
  type ActionDetail,
  INBOX_RECENT,
  type InboxWorkspace,
  type LogResponse,
  type Observation,
} from "@gatehouse/gateway-contract";
import { HttpError } from "./backends.ts";

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

/**
 * The detail of action `id`: direct dependencies and dependents, transitive undecided dependencies in
 * submission order, and the observations of the same execution (turn) recorded before it.
 * @throws HttpError 404 when the workspace has no such action.
 */
export function actionDetail(log: LogResponse, id: number): ActionDetail {
  const actions = actionsOf(log);
  const byId = new Map(actions.map((a) => [a.id, a]));
  const action = byId.get(id);
  if (!action) throw new HttpError(404, "not_found", `workspace ${log.workspaceId} has no action ${id}`);
  const undecided = new Set<number>();
  const stack = [...action.dependsOn];
  while (stack.length > 0) {
    const dep = byId.get(stack.pop() as number);
    if (!dep || undecided.has(dep.id) || dep.status !== "pending") continue;
    undecided.add(dep.id);
    stack.push(...dep.dependsOn);
  }
  const readBefore: Observation[] = action.executionId
    ? log.entries.flatMap((e) =>
        e.kind === "observation" && e.id < id && e.observation.executionId === action.executionId
          ? [e.observation]
          : [],
      )
    : [];
  return {
    action,
    dependencies: action.dependsOn.flatMap((d) => byId.get(d) ?? []),
    dependents: actions.filter((a) => a.dependsOn.includes(id)),
    undecidedDependencies: [...undecided].sort((a, b) => a - b),
    readBefore,
    revision: log.revision,
  };
}
