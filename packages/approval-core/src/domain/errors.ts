/**
 * Typed domain errors of the approval service. Each message names the field or action and says
 * how to fix the request. They never include payloads, tokens or external data.
 * gRPC status codes are assigned in one place: `src/errors.ts`.
 */
import type { PlannedEvent } from "./events.ts";

/** Base class: `code` is a stable machine name used by the status mapping. */
export abstract class ApprovalError extends Error {
  abstract readonly code: string;
  /**
   * Events the log must show although the command was refused (an `ActionRefused` for a write the
   * restricted-data latch forbids). Empty for most refusals. `WorkspaceStreams.execute` appends
   * them with the expected revision and then throws the error; a caller that only validates
   * (calls `decide` without appending) just sees the error.
   */
  recorded: PlannedEvent[] = [];
}

/** The workspace stream does not exist (no WorkspaceCreated). */
export class WorkspaceNotFound extends ApprovalError {
  readonly code = "WorkspaceNotFound";
  override name = "WorkspaceNotFound";
  constructor(readonly workspaceId: string) {
    super(`workspace_id: workspace "${workspaceId}" does not exist; create it first or check the id`);
  }
}

/** No action with this log id in the workspace. */
export class ActionNotFound extends ApprovalError {
  readonly code = "ActionNotFound";
  override name = "ActionNotFound";
  constructor(
    readonly workspaceId: string,
    readonly actionId: number,
  ) {
    super(
      `action_id: workspace "${workspaceId}" has no action ${actionId}; list actions with ListActions (CLI: gatehouse actions <workspace>) to find its id`,
    );
  }
}

/** The action is no longer pending; the message says who decided it and how. */
export class ActionNotPending extends ApprovalError {
  readonly code = "ActionNotPending";
  override name = "ActionNotPending";
  /**
   * @param lostRace true when an approval found the action already approved by someone else (two
   *   racing approvers: the loser gets ABORTED); false when the action was decided otherwise.
   */
  constructor(
    readonly actionId: number,
    readonly detail: string,
    readonly lostRace = false,
  ) {
    super(`action ${actionId} ${detail}; nothing was changed`);
  }
}

/** Approving an action whose dependencies are still pending. */
export class DependenciesUndecided extends ApprovalError {
  readonly code = "DependenciesUndecided";
  override name = "DependenciesUndecided";
  constructor(
    readonly actionId: number,
    readonly undecided: number[],
  ) {
    super(
      `action ${actionId} depends on undecided action(s) ${undecided.join(", ")}; decide them first or set include_dependencies (CLI: gatehouse approve --with-deps) to approve them too`,
    );
  }
}

/** A rejection without a reason. */
export class ReasonRequired extends ApprovalError {
  readonly code = "ReasonRequired";
  override name = "ReasonRequired";
  constructor() {
    super("reason: a rejection needs a reason (it is shown to the agent and in the log); set reason");
  }
}

/**
 * The restricted-data latch forbids this write: either it goes to a binding other than those that
 * read restricted data, or it is an egress write (`description.egress`, e.g. a git push), which is
 * refused on every binding, the latched ones included.
 */
export class WorkspaceLatched extends ApprovalError {
  readonly code = "WorkspaceLatched";
  override name = "WorkspaceLatched";
  /**
   * @param binding the binding of the refused write.
   * @param latchedBindings the bindings that read restricted data (non-empty).
   * @param egress true when the write was refused because it sends data out of the workspace.
   * @param actionId the pending action an approval named, 0 for a submission.
   */
  constructor(
    readonly binding: string,
    readonly latchedBindings: string[],
    readonly egress = false,
    readonly actionId = 0,
  ) {
    const through = latchedBindings.map((b) => `"${b}"`).join(", ");
    const subject = actionId ? `action ${actionId} (binding "${binding}")` : `binding "${binding}"`;
    super(
      egress
        ? `${subject}: the workspace read restricted data through ${through} and is latched; writes that send data out of the workspace (egress, e.g. git push) are refused on every binding for good (start a new workspace, without the restricted data, for work that must send data out)`
        : `${subject}: the workspace read restricted data through ${through} and is latched; writes to other bindings are refused for good (start a new workspace to write there)`,
    );
  }
}

/** A submission reuses a local id of the same binding. */
export class DuplicateLocalId extends ApprovalError {
  readonly code = "DuplicateLocalId";
  override name = "DuplicateLocalId";
  constructor(
    readonly binding: string,
    readonly localId: string,
    readonly existingActionId: number,
  ) {
    super(
      `local_id: "${localId}" was already submitted on binding "${binding}" as action ${existingActionId}; use a new local id per action`,
    );
  }
}

/** The binding is not introduced in the workspace (or was removed). */
export class UnknownBinding extends ApprovalError {
  readonly code = "UnknownBinding";
  override name = "UnknownBinding";
  constructor(readonly binding: string) {
    super(`binding: "${binding}" is not a binding of this workspace; introduce the resource first`);
  }
}

/** A depends_on local id does not name an earlier action of the same binding. */
export class UnknownDependency extends ApprovalError {
  readonly code = "UnknownDependency";
  override name = "UnknownDependency";
  constructor(
    readonly binding: string,
    readonly localId: string,
  ) {
    super(
      `description.depends_on: "${localId}" is not the local id of an earlier action on binding "${binding}"; list only local ids this binding submitted before`,
    );
  }
}

/** A request field is missing or malformed. */
export class InvalidField extends ApprovalError {
  readonly code = "InvalidField";
  override name = "InvalidField";
  constructor(
    readonly field: string,
    fix: string,
  ) {
    super(`${field}: ${fix}`);
  }
}

/** The action is not in the state a lifecycle step needs (claim without approval, outcome without claim...). */
export class ActionStateConflict extends ApprovalError {
  readonly code = "ActionStateConflict";
  override name = "ActionStateConflict";
}

/**
 * RequestRevert named an action that cannot be reverted: not applied (pending, approved, rejected,
 * failed), or already reverted by a revert action that is not rejected or failed.
 */
export class ActionNotRevertible extends ApprovalError {
  readonly code = "ActionNotRevertible";
  override name = "ActionNotRevertible";
  /** @param detail why, with the way forward, e.g. "it is still pending; reject it instead". */
  constructor(
    readonly actionId: number,
    readonly detail: string,
  ) {
    super(`action ${actionId} cannot be reverted: ${detail}; nothing was changed`);
  }
}

/** The caller token is not for this action's binding (GetActionForCaller). */
export class NotCallersAction extends ApprovalError {
  readonly code = "NotCallersAction";
  override name = "NotCallersAction";
  constructor(
    readonly actionId: number,
    readonly binding: string,
  ) {
    super(`action ${actionId} is not an action of binding ${binding}; use an actionId this binding returned`);
  }
}
