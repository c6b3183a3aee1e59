/** Typed kernel errors; `src/errors.ts` maps them to gRPC status codes. Messages name the field and the fix. */
export class KernelError extends Error {}

export class WorkspaceNotFound extends KernelError {
  override name = "WorkspaceNotFound";
  constructor(readonly workspaceId: string) {
    super(`workspace "${workspaceId}" does not exist; list them with \`gatehouse workspace list\``);
  }
}

export class BindingAlreadyExists extends KernelError {
  override name = "BindingAlreadyExists";
  constructor(readonly binding: string) {
    super(`binding ${binding} already exists in this workspace; pass another name with --name`);
  }
}

/** The workspace has no binding of that name (RemoveBinding). */
export class BindingNotFound extends KernelError {
  override name = "BindingNotFound";
  constructor(
    readonly workspaceId: string,
    readonly binding: string,
  ) {
    super(
      `binding ${binding} is not a binding of workspace ${workspaceId} (it may have been removed already); list them with \`gatehouse bindings ${workspaceId}\``,
    );
  }
}

export class InvalidArgument extends KernelError {
  override name = "InvalidArgument";
}

/** The URL's scheme has no gatekeeper configured here. */
export class NoGatekeeperForResource extends KernelError {
  override name = "NoGatekeeperForResource";
}

/** A gatekeeper said a person may not observe what a binding reads (AddObserver). */
export class PermissionDenied extends KernelError {
  override name = "PermissionDenied";
}

/** AddMember: the person already reaches the workspace (its owner, or a member). */
export class MemberAlreadyAdded extends KernelError {
  override name = "MemberAlreadyAdded";
  constructor(
    readonly workspaceId: string,
    readonly member: string,
    isOwner: boolean,
  ) {
    super(
      isOwner
        ? `${member} owns workspace ${workspaceId}; an owner is not added as a member`
        : `${member} is already a member of workspace ${workspaceId}; nothing to add`,
    );
  }
}

/** RemoveMember: the person is not a member (perhaps removed already). */
export class NotAMember extends KernelError {
  override name = "NotAMember";
  constructor(
    readonly workspaceId: string,
    readonly member: string,
  ) {
    super(
      `${member} is not a member of workspace ${workspaceId} (perhaps removed already); list them with \`gatehouse members ${workspaceId}\``,
    );
  }
}

/** RemoveMember: a workspace always keeps its owner. */
export class OwnerNotRemovable extends KernelError {
  override name = "OwnerNotRemovable";
  constructor(
    readonly workspaceId: string,
    readonly owner: string,
  ) {
    super(
      `${owner} owns workspace ${workspaceId} and cannot be removed from it; a workspace always keeps its owner`,
    );
  }
}
