/**
 * Workspace and membership routes: create a workspace (the signed-in person owns it, any role),
 * list its members (any member), add or remove a member (the owner only). The person reaching `:ws` is
 * checked before these handlers run (app.ts); who may add is decided here, the kernel records.
 */
import {
  AddMemberBody,
  CreateWorkspaceBody,
  type MembersResponse,
  RemoveMemberBody,
  type WorkspaceSummary,
} from "@gatehouse/gateway-contract";
import type { FastifyInstance } from "fastify";
import { personIdOf, requireOwnerOf } from "../auth/membership.ts";
import type { Backends } from "../backends.ts";

/** Registers the workspace and membership routes. */
export function workspaceRoutes(app: FastifyInstance, backends: Backends): void {
  app.post("/api/workspaces", async (req, reply): Promise<WorkspaceSummary> => {
    const body = CreateWorkspaceBody.parse(req.body ?? {});
    const ws = await backends.kernelCall(backends.kernel.createWorkspace, {
      name: body.name,
      owner: personIdOf(req.person),
      members: body.members,
    });
    reply.status(201);
    return { id: ws.id, name: ws.name, owner: ws.owner, members: ws.members };
  });

  app.get(
    "/api/workspaces/:ws/members",
    async (req): Promise<MembersResponse> => ({
      workspaceId: req.membership.workspaceId,
      owner: req.membership.owner,
      members: req.membership.members,
    }),
  );

  app.post("/api/workspaces/:ws/members", async (req): Promise<MembersResponse> => {
    requireOwnerOf(req.membership, "adding members");
    const body = AddMemberBody.parse(req.body ?? {});
    const ws = await backends.kernelCall(backends.kernel.addMember, {
      workspaceId: req.membership.workspaceId,
      member: body.member,
      addedBy: req.membership.person,
    });
    return { workspaceId: ws.id, owner: ws.owner, members: ws.members };
  });

  app.post("/api/workspaces/:ws/members/remove", async (req): Promise<MembersResponse> => {
    requireOwnerOf(req.membership, "removing members");
    const body = RemoveMemberBody.parse(req.body ?? {});
    const ws = await backends.kernelCall(backends.kernel.removeMember, {
      workspaceId: req.membership.workspaceId,
      member: body.member,
      removedBy: req.membership.person,
    });
    return { workspaceId: ws.id, owner: ws.owner, members: ws.members };
  });
}
