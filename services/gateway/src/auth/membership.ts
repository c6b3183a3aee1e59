/**
 * Workspace membership at the gateway: a person reaches only the workspaces they own or were added
 * to (kernel.proto `Workspace.owner/members`), whatever their role — every `/api/workspaces/:ws/...`
 * route, the inbox, the event stream and the MCP endpoint check it here before calling a backend,
 * so a refusal appends nothing. Roles then apply within a workspace the person reaches. The kernel
 * records membership; the gateway decides who may call.
 */
import type { Workspace } from "@gatehouse/proto";
import type { Backends } from "../backends.ts";
import { Forbidden, type Person } from "./person.ts";

/** What a person may rely on about a workspace they reach. */
export interface WorkspaceMembership {
  workspaceId: string;
  name: string;
  /** "user:<subject>" of the owner ("" when nobody owns it; then nobody reaches it here). */
  owner: string;
  /** "user:<subject>" of each member, in the order added (not the owner). */
  members: string[];
  /** The signed-in person as membership names them: "user:<subject>". */
  person: string;
  /** Whether the person is the owner (may add members and remove bindings). */
  isOwner: boolean;
}

/** The person as membership names them: "user:" + their token's subject, e.g. "user:dev-approver". */
export function personIdOf(person: Person): string {
  return `user:${person.subject}`;
}

/** Whether `personId` ("user:<subject>") owns the workspace or was added to it. */
export function isMember(workspace: Pick<Workspace, "owner" | "members">, personId: string): boolean {
  return workspace.owner === personId || workspace.members.includes(personId);
}

/** How someone who is not a member gets access: ask the owner (or an operator when there is none). */
function howToJoin(workspace: Workspace, personId: string): string {
  if (!workspace.owner) {
    return `workspace ${workspace.id} has no owner (created before workspaces had owners, or without one), so nobody reaches it here; an operator can add you with \`gatehouse members add ${workspace.id} ${personId}\``;
  }
  return `ask its owner, ${workspace.owner}, to add you (\`gatehouse members add ${workspace.id} ${personId}\`, or POST /api/workspaces/${workspace.id}/members {"member": "${personId}"})`;
}

/**
 * The person's membership of `workspaceId` (one Kernel.GetWorkspace call).
 * @returns owner, members, and whether the person owns it.
 * @throws HttpError 404 when the workspace does not exist (the kernel's message names it), 503
 *   when the kernel is unreachable.
 * @throws Forbidden naming the workspace and how to get access (its owner can add them) when the
 *   person neither owns it nor was added to it — whatever their role.
 */
export async function requireMember(
  backends: Backends,
  person: Person,
  workspaceId: string,
): Promise<WorkspaceMembership> {
  const workspace = await backends.kernelCall(backends.kernel.getWorkspace, { workspaceId });
  const personId = personIdOf(person);
  if (!isMember(workspace, personId)) {
    throw new Forbidden(
      `${person.subject} is not a member of workspace ${workspace.id}: a person reaches only the workspaces they own or were added to; ${howToJoin(workspace, personId)}`,
    );
  }
  return {
    workspaceId: workspace.id,
    name: workspace.name,
    owner: workspace.owner,
    members: workspace.members,
    person: personId,
    isOwner: workspace.owner === personId,
  };
}

/**
 * @param doing what needs the owner, e.g. "removing a binding".
 * @throws Forbidden naming the owner when the person is a member but not the owner.
 */
export function requireOwnerOf(membership: WorkspaceMembership, doing: string): void {
  if (!membership.isOwner) {
    throw new Forbidden(
      `${membership.person} is a member of workspace ${membership.workspaceId} but not its owner: ${doing} needs the owner (${membership.owner || "nobody owns it"})`,
    );
  }
}

/**
 * The workspaces the person owns or was added to, in creation order (Kernel.ListWorkspaces); none
 * for a subject membership cannot name (not printable ASCII, or longer than 255 characters).
 */
export async function reachableWorkspaces(backends: Backends, person: Person): Promise<Workspace[]> {
  if (!/^[\x21-\x7e]{1,255}$/.test(person.subject)) return [];
  const res = await backends.kernelCall(backends.kernel.listWorkspaces, { person: personIdOf(person) });
  return res.workspaces;
}
