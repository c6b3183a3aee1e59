/**
 * Workspace and membership routes: create a workspace (the signed-in person owns it, any role),
 * list its members (any member), add or remove a member (the owner only), connect a resource (an
 * admin), verify the action log's hash chain (any member). The person reaching `:ws` is checked before
 * these handlers run (app.ts); who may add is decided here, the kernel records.
 */
import {
  AddMemberBody,
  CreateWorkspaceBody,
  type MembersResponse,
  RemoveMemberBody,
  type WorkspaceSummary,
} from "@gatehouse/gateway-contract";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import { personIdOf, requireOwnerOf } from "../auth/membership.ts";
import { Forbidden } from "../auth/person.ts";
import type { Backends } from "../backends.ts";

/** `POST /api/workspaces/:ws/bindings`: the resource's URL (e.g. mcp://memory) and an optional binding name. */
const ConnectBody = z.object({
  url: z.string({ error: "url is the resource's URL, e.g. mcp://memory" }).min(1, "url must not be empty"),
  name: z.string().optional(),
});

/** A connected resource: the binding the agent now gets as env.<name>. */
export interface ConnectedBinding {
  name: string;
  url: string;
  gatekeeper: string;
  trust: string;
  methods: string[];
}

/** The action log's hash chain, recomputed (approval's Verify). */
export interface VerifyResult {
  ok: boolean;
  /** Events whose hashes were recomputed. */
  eventsChecked: number;
  /** First stream revision (from 0) whose hash does not match; -1 when ok. */
  firstBadRevision: number;
  /** What did not match ("" when ok). */
  problem: string;
}

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

  // Connecting a resource hands the workspace's agents a new capability: admins only (what the CLI's
  // `gatehouse connect` does over the kernel's gRPC, here for an installation reached through the
  // gateway alone).
  app.post("/api/workspaces/:ws/bindings", async (req, reply): Promise<ConnectedBinding> => {
    if (!req.person.roles.includes("admin")) {
      throw new Forbidden(
        `${req.person.subject} has role(s) ${req.person.roles.join(", ")}: connecting a resource needs the admin role`,
      );
    }
    const body = ConnectBody.parse(req.body ?? {});
    const b = await backends.kernelCall(backends.kernel.introduceResource, {
      workspaceId: req.membership.workspaceId,
      url: body.url,
      name: body.name ?? "",
    });
    reply.status(201);
    return { name: b.name, url: b.url, gatekeeper: b.gatekeeper, trust: b.trust, methods: b.methods };
  });

  app.get("/api/workspaces/:ws/verify", async (req): Promise<VerifyResult> => {
    const res = await backends.approval(backends.decisions.verify, {
      workspaceId: req.membership.workspaceId,
    });
    return {
      ok: res.ok,
      eventsChecked: res.eventsChecked,
      firstBadRevision: res.firstBadRevision,
      problem: res.problem,
    };
  });
}
