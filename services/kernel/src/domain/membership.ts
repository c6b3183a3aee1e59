/**
 * Who a workspace's people are, as pure functions of its state: how membership names a person,
 * the workspace as Kernel answers it, and whether a person reaches it. members.ts appends the
 * membership events; workspaces.ts and the handlers use these to check and answer.
 */
import type { Workspace } from "@gatehouse/proto";
import { InvalidArgument } from "./errors.ts";
import type { WorkspaceState } from "./workspace.ts";

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
