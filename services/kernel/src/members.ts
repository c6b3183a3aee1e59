/**
 * Workspace membership (kernel.proto `CreateWorkspace.owner/members`, `AddMember`, `RemoveMember`,
 * `GetWorkspace`, `ListWorkspaces.person`): the creator owns a workspace, owners add members, and a person reaches
 * through the gateway only the workspaces they own or were added to. The kernel records membership
 * as events of the workspace stream (WorkspaceCreated.owner, MemberAdded); who may add is decided
 * by its callers (the gateway: only the owner), as the kernel trusts its callers.
 */
import { MemberAdded, MemberRemoved, type Workspace } from "@gatehouse/proto";
import { MemberAlreadyAdded, NotAMember, OwnerNotRemovable } from "./domain/errors.ts";
import { checkPerson, reaches, workspaceOf } from "./domain/membership.ts";
import type { Workspaces } from "./workspaces.ts";

/**
 * Adds `member` to the workspace: appends MemberAdded{member, addedBy} at the revision it checked.
 * @returns the workspace as it is after the append.
 * @throws InvalidArgument (member or added_by not "user:<subject>"); WorkspaceNotFound;
 *   MemberAlreadyAdded when the person is the owner or already a member (nothing is appended).
 */
export async function addMember(
  workspaces: Workspaces,
  req: { workspaceId: string; member: string; addedBy: string },
): Promise<Workspace> {
  checkPerson("member", req.member);
  checkPerson("added_by", req.addedBy);
  const { result } = await workspaces.appendAtRevision(
    req.workspaceId,
    req.addedBy,
    async (state) => {
      if (reaches(state, req.member)) {
        throw new MemberAlreadyAdded(req.workspaceId, req.member, state.owner === req.member);
      }
      const event: MemberAdded = { member: req.member, addedBy: req.addedBy };
      const after = workspaceOf(state);
      after.members.push(req.member);
      return { type: "MemberAdded", data: MemberAdded.toJSON(event), result: after };
    },
    "the workspace changed too often while adding the member; try again",
  );
  return result;
}

/**
 * Removes `member` from the workspace: appends MemberRemoved{member, removedBy} at the revision it
 * checked.
 * @returns the workspace as it is after the append.
 * @throws InvalidArgument (member or removed_by not "user:<subject>"); WorkspaceNotFound;
 *   OwnerNotRemovable for the owner; NotAMember when the person is not a member (nothing is appended).
 */
export async function removeMember(
  workspaces: Workspaces,
  req: { workspaceId: string; member: string; removedBy: string },
): Promise<Workspace> {
  checkPerson("member", req.member);
  checkPerson("removed_by", req.removedBy);
  const { result } = await workspaces.appendAtRevision(
    req.workspaceId,
    req.removedBy,
    async (state) => {
      if (state.owner === req.member) throw new OwnerNotRemovable(req.workspaceId, req.member);
      if (!state.members.includes(req.member)) throw new NotAMember(req.workspaceId, req.member);
      const event: MemberRemoved = { member: req.member, removedBy: req.removedBy };
      const after = workspaceOf(state);
      after.members = after.members.filter((m) => m !== req.member);
      return { type: "MemberRemoved", data: MemberRemoved.toJSON(event), result: after };
    },
    "the workspace changed too often while removing the member; try again",
  );
  return result;
}
