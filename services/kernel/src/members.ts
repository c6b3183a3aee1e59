/**
 * Workspace membership (kernel.proto `CreateWorkspace.owner/members`, `AddMember`, `RemoveMember`,
 * `GetWorkspace`, `ListWorkspaces.person`): the creator owns a workspace, owners add members, and a person reaches
 * through the gateway only the workspaces they own or were added to. The kernel records membership
 * as events of the workspace stream (WorkspaceCreated.owner, MemberAdded); who may add is decided
 * by its callers (the gateway: only the owner), as the kernel trusts its callers.
 */
import { MemberAdded, MemberRemoved, type Workspace } from "@gatehouse/proto";
import { InvalidArgument, MemberAlreadyAdded, NotAMember, OwnerNotRemovable } from "./domain/errors.ts";
import type { WorkspaceState } from "./domain/workspace.ts";
import type { Workspaces } from "./workspaces.ts";

/**
 * A person as membership names them: "user:" + an OIDC subject (1-255 printable ASCII characters
 * without spaces, OpenID Connect Core §2), e.g. "user:dev-approver", "user:auth0|5f1c".
 */
export const MEMBER_ID = /^user:[\x21-\x7e]{1,255}$/;

/**
 * @throws InvalidArgument naming `field` when `value` is not "user:<subject>".
 */
export function checkPerson(field: string, value: string): void {
  if (!MEMBER_ID.test(value)) {
    const shown = JSON.stringify(value.slice(0, 80));
    throw new InvalidArgument(
      `${field} must be a person as "user:<subject>" (the subject of their sign-in token, printable, no spaces), e.g. "user:dev-approver"; got ${shown}`,
    );
  }
}

/** The workspace as Kernel answers it: identity, owner and members. */
export function workspaceOf(state: WorkspaceState): Workspace {
  return { id: state.id, name: state.name, owner: state.owner, members: [...state.members] };
}

/** Whether `person` ("user:<subject>") owns the workspace or is one of its members. */
export function reaches(workspace: Pick<Workspace, "owner" | "members">, person: string): boolean {
  return person !== "" && (workspace.owner === person || workspace.members.includes(person));
}

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
