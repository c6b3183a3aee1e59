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
import type { ProjectionDb, Row } from "./db.ts";

const PENDING = ActionStatus.ACTION_STATUS_PENDING;

const WORKSPACE =
  "SELECT revision, latched, ws_exists, rules FROM gatehouse_rm_workspaces WHERE workspace_id = ?";
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

// The inbox of many workspaces in one statement: one row per known workspace, its pending actions and
// its `limit` most recently changed decided ones each aggregated into one blob of length-prefixed
// entries (a 4-byte big-endian length, then the LogEntry bytes), so the result does not grow by a row
// (a Buffer, a round trip's parsing) per action. Parameters: PENDING, PENDING, limit, the workspace ids.
// SQLite: needs 3.44+ (ORDER BY inside group_concat) and a UTF-8 database (`||` and group_concat pass
// the blob bytes through as text unchanged; better-sqlite3 bundles such a SQLite and creates UTF-8 files).
const INBOX_SQLITE = `SELECT s.workspace_id, s.revision, s.latched, s.ws_exists,
    (SELECT CAST(group_concat(unhex(printf('%08x', length(e.entry))) || e.entry, '' ORDER BY e.log_id) AS BLOB)
      FROM gatehouse_rm_entries e
      WHERE e.workspace_id = s.workspace_id AND e.kind = 'action' AND e.status = ?) AS pending,
    (SELECT CAST(group_concat(unhex(printf('%08x', length(r.entry))) || r.entry, ''
        ORDER BY r.last_revision DESC, r.log_id DESC) AS BLOB)
      FROM (SELECT e.entry, e.last_revision, e.log_id FROM gatehouse_rm_entries e
        WHERE e.workspace_id = s.workspace_id AND e.kind = 'action' AND e.status <> ?
        ORDER BY e.last_revision DESC, e.log_id DESC LIMIT ?) r) AS recent
  FROM gatehouse_rm_workspaces s WHERE s.workspace_id IN (SELECT value FROM json_each(?))`;
const INBOX_POSTGRES = `SELECT s.workspace_id, s.revision, s.latched, s.ws_exists,
    (SELECT string_agg(int4send(length(e.entry)) || e.entry, ''::bytea ORDER BY e.log_id)
      FROM gatehouse_rm_entries e
      WHERE e.workspace_id = s.workspace_id AND e.kind = 'action' AND e.status = ?) AS pending,
    (SELECT string_agg(int4send(length(r.entry)) || r.entry, ''::bytea
        ORDER BY r.last_revision DESC, r.log_id DESC)
      FROM (SELECT e.entry, e.last_revision, e.log_id FROM gatehouse_rm_entries e
        WHERE e.workspace_id = s.workspace_id AND e.kind = 'action' AND e.status <> ?
        ORDER BY e.last_revision DESC, e.log_id DESC LIMIT ?) r) AS recent
  FROM gatehouse_rm_workspaces s WHERE s.workspace_id = ANY(?::text[])`;

/** The actions of a blob of length-prefixed LogEntry bytes (see INBOX_SQLITE); null = none. */
function actionsOfBlob(blob: unknown): ActionRecord[] {
  const out: ActionRecord[] = [];
  if (blob === null || blob === undefined) return out;
  const bytes = blob as Uint8Array;
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 0;
  while (at < bytes.length) {
    const end = at + 4 + view.getUint32(at);
    if (end > bytes.length) throw new Error(`inbox: entry blob truncated at byte ${at} of ${bytes.length}`);
    const e = LogEntry.decode(bytes.subarray(at + 4, end));
    if (e.entry?.$case === "action") out.push(e.entry.action);
    at = end;
  }
  return out;
}

/**
 * Inbox views of the workspaces, in request order, unknown ids left out: pending actions in id order,
 * and the `recentLimit` most recently changed decided ones (last_revision, then id, descending).
 * One statement whatever the number of workspaces.
 */
export async function inbox(
  db: ProjectionDb,
  workspaceIds: string[],
  recentLimit: number,
): Promise<InboxWorkspaceView[]> {
  if (workspaceIds.length === 0) return [];
  const limit = Math.max(0, Math.trunc(recentLimit));
  const ids = [...new Set(workspaceIds)];
  const [rows] = await db.read([
    db.dialect === "postgres"
      ? { sql: INBOX_POSTGRES, params: [PENDING, PENDING, limit, ids] }
      : { sql: INBOX_SQLITE, params: [PENDING, PENDING, limit, JSON.stringify(ids)] },
  ]);
  const byId = new Map<string, Row>();
  for (const r of rows as Row[]) if (Number(r.ws_exists) === 1) byId.set(String(r.workspace_id), r);
  // A workspace asked for twice is answered twice, each view decoded on its own (no shared objects).
  return workspaceIds.flatMap((ws) => {
    const r = byId.get(ws);
    if (!r) return [];
    return [
      {
        workspaceId: ws,
        revision: Number(r.revision),
        latched: Number(r.latched) === 1,
        pending: actionsOfBlob(r.pending),
        recent: actionsOfBlob(r.recent),
      },
    ];
  });
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
