/**
 * The oracle: the web gateway's pure views (services/gateway/src/views.ts `inboxWorkspace`,
 * `actionDetail`) ported onto a LogView folded from the stream, in the proto messages' terms. One
 * deliberate difference, from approval.proto: dependencies are listed in id order (the gateway keeps
 * dependsOn order).
 */
import {
  type ActionDetailView,
  type ActionRecord,
  ActionStatus,
  type InboxWorkspaceView,
  type LogView,
  type ObservationRecord,
} from "@gatehouse/proto";

function actionsOf(log: LogView): ActionRecord[] {
  return log.entries.flatMap((e) => (e.entry?.$case === "action" ? [e.entry.action] : []));
}

const PENDING = ActionStatus.ACTION_STATUS_PENDING;

/** Pending in submission order, then the `recentLimit` most recently changed decided ones. */
export function inboxOracle(log: LogView, workspaceId: string, recentLimit: number): InboxWorkspaceView {
  const actions = actionsOf(log);
  return {
    workspaceId,
    revision: log.revision,
    latched: log.latched,
    pending: actions.filter((a) => a.status === PENDING),
    recent: actions
      .filter((a) => a.status !== PENDING)
      .sort((a, b) => b.lastRevision - a.lastRevision || b.id - a.id)
      .slice(0, recentLimit),
  };
}

/** The detail of action `id`, or undefined when the log has no such action. */
export function detailOracle(log: LogView, id: number): ActionDetailView | undefined {
  const actions = actionsOf(log);
  const byId = new Map(actions.map((a) => [a.id, a]));
  const action = byId.get(id);
  if (!action) return undefined;
  const undecided = new Set<number>();
  const stack = [...action.dependsOn];
  while (stack.length > 0) {
    const dep = byId.get(stack.pop() as number);
    if (!dep || undecided.has(dep.id) || dep.status !== PENDING) continue;
    undecided.add(dep.id);
    stack.push(...dep.dependsOn);
  }
  const readBefore: ObservationRecord[] = action.executionId
    ? log.entries.flatMap((e) =>
        e.entry?.$case === "observation" &&
        e.id < id &&
        e.entry.observation.executionId === action.executionId
          ? [e.entry.observation]
          : [],
      )
    : [];
  return {
    action,
    dependencies: [...action.dependsOn].sort((a, b) => a - b).flatMap((d) => byId.get(d) ?? []),
    dependents: actions.filter((a) => a.dependsOn.includes(id)),
    undecidedDependencies: [...undecided].sort((a, b) => a - b),
    readBefore,
    revision: log.revision,
  };
}
