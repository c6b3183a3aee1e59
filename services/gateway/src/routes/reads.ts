/**
 * Read routes: me, workspaces, inbox, action detail, log (live or replayed), bindings. Every role
 * may read, only in the workspaces the person owns or was added to (auth/membership.ts).
 */
import type {
  ActionDetail,
  BindingsResponse,
  InboxResponse,
  LogResponse,
  Me,
  WorkspacesResponse,
} from "@gatehouse/gateway-contract";
import type { FastifyInstance } from "fastify";
import { reachableWorkspaces, requireMember } from "../auth/membership.ts";
import { canDecide, canSetRules, type Person } from "../auth/person.ts";
import { type Backends, HttpError } from "../backends.ts";
import { toLogResponse } from "../mapping.ts";
import { actionDetail, inboxWorkspace } from "../views.ts";
import { pendingConnectionRequests } from "./connections.ts";
import { ActionParams, InboxQuery, LogQuery, WorkspaceParam } from "./params.ts";

/** Reads one workspace's live log, or the log replayed up to revision `until` (inclusive). */
export async function readLog(backends: Backends, ws: string, until?: number): Promise<LogResponse> {
  const live = await backends.approval(backends.decisions.getLog, { workspaceId: ws });
  if (until !== undefined && until > live.revision) {
    throw new HttpError(
      400,
      "out_of_range",
      `until: revision ${until} does not exist yet; workspace ${ws} is at revision ${live.revision}`,
    );
  }
  if (until === undefined || until === live.revision) return toLogResponse(live, live.revision);
  const past = await backends.approval(backends.decisions.replay, { workspaceId: ws, untilRevision: until });
  return toLogResponse(past, live.revision);
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
    const workspaces = await Promise.all(
      chosen.map(async (w) => {
        const [log, connectionRequests] = await Promise.all([
          readLog(backends, w.id),
          pendingConnectionRequests(backends, w.id),
        ]);
        return { ...inboxWorkspace(w, log), connectionRequests };
      }),
    );
    return { workspaces };
  });

  app.get("/api/workspaces/:ws/actions/:id", async (req): Promise<ActionDetail> => {
    const { ws, id } = ActionParams.parse(req.params);
    return actionDetail(await readLog(backends, ws), id);
  });

  app.get("/api/workspaces/:ws/log", async (req): Promise<LogResponse> => {
    const { ws } = WorkspaceParam.parse(req.params);
    const { until } = LogQuery.parse(req.query);
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
