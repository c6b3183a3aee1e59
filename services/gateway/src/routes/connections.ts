/**
 * Connection-request routes: list a workspace's requests (every role), accept or decline one
 * (approver or admin, like deciding an action; the person's subject is recorded as `decidedBy`).
 * The inbox carries each workspace's pending requests (`pendingConnectionRequests`).
 */
import {
  AcceptConnectionBody,
  type ConnectionDecisionResult,
  type ConnectionRequest,
  type ConnectionRequestsResponse,
  DeclineConnectionBody,
} from "@gatehouse/gateway-contract";
import type { ConnectionRequest as ConnectionRequestMessage } from "@gatehouse/proto";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { requireDecider } from "../auth/person.ts";
import type { Backends } from "../backends.ts";
import { WorkspaceParam } from "./params.ts";

/** A workspace id and a connection request id (a positive whole number: a log position). */
const RequestParams = WorkspaceParam.extend({
  id: z
    .string()
    .regex(/^[1-9][0-9]{0,14}$/, "a connection request id is a positive whole number in decimal, e.g. 3")
    .transform(Number),
});

const StateQuery = z.object({
  state: z
    .enum(["pending", "accepted", "declined"], { error: "state is one of pending, accepted, declined" })
    .optional(),
});

/** The contract's shape of a Connections message. */
export function toConnectionRequest(r: ConnectionRequestMessage): ConnectionRequest {
  return {
    id: r.requestId,
    workspaceId: r.workspaceId,
    url: r.url,
    reason: r.reason,
    caller: { kind: r.caller?.kind ?? "user", id: r.caller?.id ?? "" },
    requestedAt: r.requestedAt,
    state: r.state as ConnectionRequest["state"],
    gatekeeper: r.gatekeeper,
    binding: r.binding,
    acceptedUrl: r.acceptedUrl,
    decidedBy: r.decidedBy,
    decidedAt: r.decidedAt,
    declineReason: r.declineReason,
  };
}

/** The workspace's pending requests, oldest first. @throws HttpError. */
export async function pendingConnectionRequests(
  backends: Backends,
  ws: string,
): Promise<ConnectionRequest[]> {
  const res = await backends.connectionsCall(backends.connections.listConnectionRequests, {
    workspaceId: ws,
    state: "pending",
  });
  return res.requests.map(toConnectionRequest);
}

/** Registers the connection-request routes. */
export function connectionRoutes(app: FastifyInstance, backends: Backends): void {
  app.get("/api/workspaces/:ws/connection-requests", async (req): Promise<ConnectionRequestsResponse> => {
    const { ws } = WorkspaceParam.parse(req.params);
    const { state } = StateQuery.parse(req.query);
    const res = await backends.connectionsCall(backends.connections.listConnectionRequests, {
      workspaceId: ws,
      state: state ?? "",
    });
    return { requests: res.requests.map(toConnectionRequest) };
  });

  app.post(
    "/api/workspaces/:ws/connection-requests/:id/accept",
    async (req): Promise<ConnectionDecisionResult> => {
      requireDecider(req.person);
      const { ws, id } = RequestParams.parse(req.params);
      const body = AcceptConnectionBody.parse(req.body ?? {});
      const res = await backends.connectionsCall(backends.connections.decideConnectionRequest, {
        workspaceId: ws,
        requestId: id,
        accept: true,
        url: body.url ?? "",
        name: body.name ?? "",
        decidedBy: req.person.subject,
        reason: "",
      });
      return { request: toConnectionRequest(res) };
    },
  );

  app.post(
    "/api/workspaces/:ws/connection-requests/:id/decline",
    async (req): Promise<ConnectionDecisionResult> => {
      requireDecider(req.person);
      const { ws, id } = RequestParams.parse(req.params);
      const body = DeclineConnectionBody.parse(req.body ?? {});
      const res = await backends.connectionsCall(backends.connections.decideConnectionRequest, {
        workspaceId: ws,
        requestId: id,
        accept: false,
        url: "",
        name: "",
        decidedBy: req.person.subject,
        reason: body.reason,
      });
      return { request: toConnectionRequest(res) };
    },
  );
}
