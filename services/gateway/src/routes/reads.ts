/**
 * Read routes: me, workspaces, inbox, action detail, log (live or replayed), bindings. Every role
 * may read, only in the workspaces the person owns or was added to (auth/membership.ts).
 */
import {
  type ActionDetail,
  type BindingsResponse,
  INBOX_RECENT,
  type InboxResponse,
  type InboxWorkspace,
  type LogResponse,
  type Me,
  type WorkspacesResponse,
} from "@gatehouse/gateway-contract";
import type { ActionRecord, LogView } from "@gatehouse/proto";
import type { FastifyInstance } from "fastify";
import { reachableWorkspaces, requireMember } from "../auth/membership.ts";
import { canDecide, canSetRules, type Person } from "../auth/person.ts";
import { type Backends, HttpError } from "../backends.ts";
import { toAction, toLogResponse, toObservation } from "../mapping.ts";
import { pendingConnectionRequests } from "./connections.ts";
import { ActionParams, InboxQuery, LogQuery, WorkspaceParam } from "./params.ts";

/** Entries per GetLogPage call when the gateway assembles a whole log. */
const LOG_PAGE = 2000;
/** Most workspaces per GetInbox call (the approval service accepts up to 1000). */
const INBOX_CHUNK = 500;

/**
 * One workspace's live log from the read model, assembled from GetLogPage pages. The revision is
 * the first page's (the oldest the entries can be): a notice with a higher revision means re-read.
 */
async function liveLog(backends: Backends, ws: string): Promise<LogResponse> {
  let first: LogView | undefined;
  const entries: LogView["entries"] = [];
  for (let afterId = 0; ; ) {
    const page = await backends.approval(backends.decisions.getLogPage, {
      workspaceId: ws,
      afterId,
      limit: LOG_PAGE,
    });
    const view = page.view as LogView;
    first ??= view;
    entries.push(...view.entries);
    if (!page.nextAfterId) break;
    afterId = page.nextAfterId;
  }
  const view = first as LogView;
  return toLogResponse({ ...view, entries }, view.revision);
}

/** The stream's current revision, from the read model (a one-entry page). */
async function headRevision(backends: Backends, ws: string): Promise<number> {
  const page = await backends.approval(backends.decisions.getLogPage, {
    workspaceId: ws,
    afterId: 0,
    limit: 1,
  });
  return page.view?.revision ?? -1;
}

/**
 * Reads one workspace's live log (from the read model), or the log replayed up to revision `until`
 * (inclusive; folded from the stream by Replay).
 * @throws HttpError 400 when `until` is past the stream's revision; 404 for an unknown workspace.
 */
export async function readLog(backends: Backends, ws: string, until?: number): Promise<LogResponse> {
  if (until === undefined) return liveLog(backends, ws);
  const head = await headRevision(backends, ws);
  if (until > head) {
    throw new HttpError(
      400,
      "out_of_range",
      `until: revision ${until} does not exist yet; workspace ${ws} is at revision ${head}`,
    );
  }
  if (until === head) return liveLog(backends, ws);
  const past = await backends.approval(backends.decisions.replay, { workspaceId: ws, untilRevision: until });
  return toLogResponse(past, head);
}

/** One page of the live log: entries with log id > `after`, at most `limit`; `nextAfter` 0 on the last page. */
async function readLogPage(
  backends: Backends,
  ws: string,
  after: number,
  limit: number,
): Promise<LogResponse> {
  const page = await backends.approval(backends.decisions.getLogPage, {
    workspaceId: ws,
    afterId: after,
    limit,
  });
  const view = page.view as LogView;
  return { ...toLogResponse(view, view.revision), nextAfter: page.nextAfterId };
}

/**
 * The inbox rows of `chosen` workspaces from the read model (GetInbox, in chunks), in the given
 * order; a workspace the read model does not know (yet) is left out.
 */
async function inboxOf(
  backends: Backends,
  chosen: { id: string; name: string }[],
): Promise<Omit<InboxWorkspace, "connectionRequests">[]> {
  const out: Omit<InboxWorkspace, "connectionRequests">[] = [];
  for (let i = 0; i < chosen.length; i += INBOX_CHUNK) {
    const chunk = chosen.slice(i, i + INBOX_CHUNK);
    const res = await backends.approval(backends.decisions.getInbox, {
      workspaceIds: chunk.map((w) => w.id),
      recentLimit: INBOX_RECENT,
    });
    const names = new Map(chunk.map((w) => [w.id, w.name]));
    for (const w of res.workspaces) {
      out.push({
        id: w.workspaceId,
        name: names.get(w.workspaceId) ?? w.workspaceId,
        revision: w.revision,
        latched: w.latched,
        pending: w.pending.map(toAction),
        recent: w.recent.map(toAction),
      });
    }
  }
  return out;
}

async function listWorkspaces(backends: Backends, person: Person): Promise<WorkspacesResponse> {
  const reach = await reachableWorkspaces(backends, person);
  return { workspaces: reach.map((w) => ({ id: w.id, name: w.name, owner: w.owner, members: w.members })) };
}

/** Registers the read routes. */
export function readRoutes(app: FastifyInstance, backends: Backends): void {
  app.get("/api/me", async (req): Promise<Me> => {
    const p = req.person;
    return {
      subject: p.subject,
      name: p.name,
      roles: p.roles,
      canDecide: canDecide(p),
      canSetRules: canSetRules(p),
    };
  });

  app.get(
    "/api/workspaces",
    async (req): Promise<WorkspacesResponse> => listWorkspaces(backends, req.person),
  );

  app.get("/api/inbox", async (req): Promise<InboxResponse> => {
    const { workspace } = InboxQuery.parse(req.query);
    const chosen = workspace
      ? [await requireMember(backends, req.person, workspace)].map((m) => ({
          id: m.workspaceId,
          name: m.name,
        }))
      : (await reachableWorkspaces(backends, req.person)).map((w) => ({ id: w.id, name: w.name }));
    const [rows, requests] = await Promise.all([
      inboxOf(backends, chosen),
      Promise.all(chosen.map((w) => pendingConnectionRequests(backends, w.id))),
    ]);
    const requestsOf = new Map(chosen.map((w, i) => [w.id, requests[i] ?? []]));
    return { workspaces: rows.map((w) => ({ ...w, connectionRequests: requestsOf.get(w.id) ?? [] })) };
  });

  app.get("/api/workspaces/:ws/actions/:id", async (req): Promise<ActionDetail> => {
    const { ws, id } = ActionParams.parse(req.params);
    const d = await backends.approval(backends.decisions.getActionDetail, { workspaceId: ws, actionId: id });
    return {
      action: toAction(d.action as ActionRecord),
      dependencies: d.dependencies.map(toAction),
      dependents: d.dependents.map(toAction),
      undecidedDependencies: d.undecidedDependencies,
      readBefore: d.readBefore.map(toObservation),
      revision: d.revision,
    };
  });

  app.get("/api/workspaces/:ws/log", async (req): Promise<LogResponse> => {
    const { ws } = WorkspaceParam.parse(req.params);
    const { until, after, limit } = LogQuery.parse(req.query);
    if (limit !== undefined) {
      if (until !== undefined)
        throw new HttpError(
          400,
          "invalid_argument",
          "limit pages the live log; it cannot be combined with until",
        );
      return readLogPage(backends, ws, after ?? 0, limit);
    }
    if (after !== undefined)
      throw new HttpError(400, "invalid_argument", "after needs limit (the page size)");
    return readLog(backends, ws, until);
  });

  app.get("/api/workspaces/:ws/bindings", async (req): Promise<BindingsResponse> => {
    const { ws } = WorkspaceParam.parse(req.params);
    const res = await backends.kernelCall(backends.kernel.describeBindings, { workspaceId: ws });
    return {
      bindings: res.bindings.map((b) => ({
        name: b.name,
        url: b.url,
        gatekeeper: b.gatekeeper,
        trust: b.trust,
        actionKinds: b.actionKinds?.kinds.map((k) => ({ ...k })) ?? null,
      })),
    };
  });
}
