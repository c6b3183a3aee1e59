/** The read side: inbox, action detail, log pages and the whole log, from the tables (one snapshot each). */
import { ActionNotFound, InvalidField, WorkspaceNotFound } from "@gatehouse/approval-core";
import {
  type ActionDetailView,
  type ActionRecord,
  ActionStatus,
  type InboxWorkspaceView,
  LogEntry,
  type LogPage,
  LogView,
  type ObservationRecord,
} from "@gatehouse/proto";
import type { ProjectionDb, Row, Statement } from "./db.ts";

const PENDING = ActionStatus.ACTION_STATUS_PENDING;

const WORKSPACE =
  "SELECT revision, latched, ws_exists, rules FROM gatehouse_rm_workspaces WHERE workspace_id = ?";
const PENDING_OF = `SELECT entry FROM gatehouse_rm_entries
  WHERE workspace_id = ? AND kind = 'action' AND status = ? ORDER BY log_id`;
const RECENT_OF = `SELECT entry FROM gatehouse_rm_entries
  WHERE workspace_id = ? AND kind = 'action' AND status <> ? ORDER BY last_revision DESC, log_id DESC LIMIT ?`;
const ACTION =
  "SELECT entry FROM gatehouse_rm_entries WHERE workspace_id = ? AND log_id = ? AND kind = 'action'";
const DEPENDENCIES = `SELECT e.entry FROM gatehouse_rm_depends d
  JOIN gatehouse_rm_entries e ON e.workspace_id = d.workspace_id AND e.log_id = d.depends_on
  WHERE d.workspace_id = ? AND d.action_id = ? AND e.kind = 'action' ORDER BY e.log_id`;
const DEPENDENTS = `SELECT e.entry FROM gatehouse_rm_depends d
  JOIN gatehouse_rm_entries e ON e.workspace_id = d.workspace_id AND e.log_id = d.action_id
  WHERE d.workspace_id = ? AND d.depends_on = ? AND e.kind = 'action' ORDER BY e.log_id`;
// Pending dependencies, transitively through pending ones only (a decided dependency ends the walk).
const UNDECIDED = `WITH RECURSIVE undecided(id) AS (
    SELECT d.depends_on FROM gatehouse_rm_depends d
      JOIN gatehouse_rm_entries e ON e.workspace_id = d.workspace_id AND e.log_id = d.depends_on
      WHERE d.workspace_id = ? AND d.action_id = ? AND e.kind = 'action' AND e.status = ?
    UNION
    SELECT d.depends_on FROM undecided u
      JOIN gatehouse_rm_depends d ON d.workspace_id = ? AND d.action_id = u.id
      JOIN gatehouse_rm_entries e ON e.workspace_id = d.workspace_id AND e.log_id = d.depends_on
      WHERE e.kind = 'action' AND e.status = ?
  ) SELECT id FROM undecided ORDER BY id`;
const READ_BEFORE = `SELECT o.entry FROM gatehouse_rm_entries a
  JOIN gatehouse_rm_entries o ON o.workspace_id = a.workspace_id AND o.execution_id = a.execution_id
    AND o.log_id < a.log_id AND o.kind = 'observation'
  WHERE a.workspace_id = ? AND a.log_id = ? AND a.kind = 'action' AND a.execution_id <> ''
  ORDER BY o.log_id`;
const PAGE =
  "SELECT entry FROM gatehouse_rm_entries WHERE workspace_id = ? AND log_id > ? ORDER BY log_id LIMIT ?";
const ALL = "SELECT entry FROM gatehouse_rm_entries WHERE workspace_id = ? ORDER BY log_id";

/** Largest `limit` of {@link logPage}. */
export const MAX_PAGE = 5000;

interface Head {
  workspaceId: string;
  revision: number;
  latched: boolean;
  rules: LogView["rules"];
}

/** The workspace's head from its row, or undefined when it has none or no WorkspaceCreated. */
function head(rows: Row[]): Head | undefined {
  const r = rows[0];
  if (!r || Number(r.ws_exists) !== 1) return undefined;
  const view = LogView.decode(r.rules as Uint8Array);
  return {
    workspaceId: view.workspaceId,
    revision: Number(r.revision),
    latched: Number(r.latched) === 1,
    rules: view.rules,
  };
}

function entries(rows: Row[]): LogEntry[] {
  return rows.map((r) => LogEntry.decode(r.entry as Uint8Array));
}

function actions(rows: Row[]): ActionRecord[] {
  return entries(rows).flatMap((e) => (e.entry?.$case === "action" ? [e.entry.action] : []));
}

function observations(rows: Row[]): ObservationRecord[] {
  return entries(rows).flatMap((e) => (e.entry?.$case === "observation" ? [e.entry.observation] : []));
}

/**
 * Inbox views of the workspaces, in request order, unknown ids left out: pending actions in id order,
 * and the `recentLimit` most recently changed decided ones (last_revision, then id, descending).
 */
export async function inbox(
  db: ProjectionDb,
  workspaceIds: string[],
  recentLimit: number,
): Promise<InboxWorkspaceView[]> {
  const limit = Math.max(0, Math.trunc(recentLimit));
  const statements: Statement[] = workspaceIds.flatMap((ws) => [
    { sql: WORKSPACE, params: [ws] },
    { sql: PENDING_OF, params: [ws, PENDING] },
    { sql: RECENT_OF, params: [ws, PENDING, limit] },
  ]);
  const results = await db.read(statements);
  const out: InboxWorkspaceView[] = [];
  workspaceIds.forEach((ws, i) => {
    const h = head(results[3 * i] as Row[]);
    if (!h) return;
    out.push({
      workspaceId: ws,
      revision: h.revision,
      latched: h.latched,
      pending: actions(results[3 * i + 1] as Row[]),
      recent: actions(results[3 * i + 2] as Row[]),
    });
  });
  return out;
}

/**
 * One action with its direct dependencies and dependents (id order), its pending transitive
 * dependencies (through pending ones, id order), and its execution's earlier observations.
 * @throws WorkspaceNotFound; ActionNotFound when the workspace has no action with that id.
 */
export async function actionDetail(
  db: ProjectionDb,
  workspaceId: string,
  actionId: number,
): Promise<ActionDetailView> {
  const [ws, action, deps, dependents, undecided, readBefore] = (await db.read([
    { sql: WORKSPACE, params: [workspaceId] },
    { sql: ACTION, params: [workspaceId, actionId] },
    { sql: DEPENDENCIES, params: [workspaceId, actionId] },
    { sql: DEPENDENTS, params: [workspaceId, actionId] },
    { sql: UNDECIDED, params: [workspaceId, actionId, PENDING, workspaceId, PENDING] },
    { sql: READ_BEFORE, params: [workspaceId, actionId] },
  ])) as Row[][];
  const h = head(ws as Row[]);
  if (!h) throw new WorkspaceNotFound(workspaceId);
  const record = actions(action as Row[])[0];
  if (!record) throw new ActionNotFound(workspaceId, actionId);
  return {
    action: record,
    dependencies: actions(deps as Row[]),
    dependents: actions(dependents as Row[]),
    undecidedDependencies: (undecided as Row[]).map((r) => Number(r.id)),
    readBefore: observations(readBefore as Row[]),
    revision: h.revision,
  };
}

/**
 * Entries with log id > `afterId`, at most `limit`, with the rules, latch and revision;
 * `nextAfterId` = the last entry's id when more follow, else 0.
 * @throws WorkspaceNotFound; InvalidField when `limit` is not 1..{@link MAX_PAGE}.
 */
export async function logPage(
  db: ProjectionDb,
  workspaceId: string,
  afterId: number,
  limit: number,
): Promise<LogPage> {
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE)
    throw new InvalidField("limit", `must be 1..${MAX_PAGE} entries`);
  const [ws, rows] = (await db.read([
    { sql: WORKSPACE, params: [workspaceId] },
    { sql: PAGE, params: [workspaceId, afterId, limit + 1] },
  ])) as Row[][];
  const h = head(ws as Row[]);
  if (!h) throw new WorkspaceNotFound(workspaceId);
  const all = entries(rows as Row[]);
  const page = all.slice(0, limit);
  const more = all.length > limit;
  return {
    view: { ...h, entries: page },
    nextAfterId: more ? (page[page.length - 1] as LogEntry).id : 0,
  };
}

/** The whole log as one LogView (equal to `toLogView` of the folded stream). @throws WorkspaceNotFound. */
export async function logView(db: ProjectionDb, workspaceId: string): Promise<LogView> {
  const [ws, rows] = (await db.read([
    { sql: WORKSPACE, params: [workspaceId] },
    { sql: ALL, params: [workspaceId] },
  ])) as Row[][];
  const h = head(ws as Row[]);
  if (!h) throw new WorkspaceNotFound(workspaceId);
  return {
    workspaceId: h.workspaceId,
    entries: entries(rows as Row[]),
    rules: h.rules,
    latched: h.latched,
    revision: h.revision,
  };
}
