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

/**
 * A submission reuses a local id of the same binding and is not a retry of the recorded one (a
 * retry — same execution, identical description and payload — returns the recorded action).
 */
export class DuplicateLocalId extends ApprovalError {
  readonly code = "DuplicateLocalId";
  override name = "DuplicateLocalId";
  /** @param differs what differs from the recorded submission, e.g. "its payload". */
  constructor(
    readonly binding: string,
    readonly localId: string,
    readonly existingActionId: number,
    readonly differs = "",
  ) {
    super(
      `local_id: "${localId}" was already submitted on binding "${binding}" as action ${existingActionId}${differs ? ` with a different ${differs}` : ""}; a retry must resend exactly the same submission, and a new action needs a new local id`,
    );
  }
}

/**
 * An observation request id was already used by this binding and execution for a different read
 * (a retry with the same description returns the recorded observation instead).
 */
export class DuplicateObservationRequest extends ApprovalError {
  readonly code = "DuplicateObservationRequest";
  override name = "DuplicateObservationRequest";
  constructor(
    readonly binding: string,
    readonly requestId: string,
    readonly existingObservationId: number,
  ) {
    super(
      `request_id: "${requestId}" was already used on binding "${binding}" for observation ${existingObservationId} with a different description; a retry must resend the same description, and a new read needs a new request id`,
    );
  }
}

function tagList(tags: readonly string[]): string {
  return tags.length === 0 ? "none" : tags.map((t) => `"${t}"`).join(", ");
}

/**
 * Turning off a rule that is not on: it never existed, or it was turned off already. Nothing is
 * recorded. `enabledTags` are the binding's rules that are on, for the message.
 */
export class RuleNotFound extends ApprovalError {
  readonly code = "RuleNotFound";
  override name = "RuleNotFound";
  constructor(
    readonly binding: string,
    readonly tag: string,
    readonly enabledTags: readonly string[],
  ) {
    super(
      `action_kind_tag: binding "${binding}" has no auto-approval rule for "${tag}" that is on (it never existed, or was turned off already), so there is nothing to turn off and nothing was recorded; its rules that are on: ${tagList(enabledTags)}; list the workspace's rules with GetLog (CLI: gatehouse log <workspace>)`,
    );
  }
}

/** Enabling a rule for a tag the binding's gatekeeper did not publish for it: no action can carry it. */
export class UnknownActionKind extends ApprovalError {
  readonly code = "UnknownActionKind";
  override name = "UnknownActionKind";
  /** @param autoApprovableTags the binding's tags a rule may enable. */
  constructor(
    readonly binding: string,
    readonly tag: string,
    readonly autoApprovableTags: readonly string[],
  ) {
    super(
      `action_kind_tag: no action of binding "${binding}" can carry "${tag}", so a rule for it would never fire; its auto-approvable tags: ${tagList(autoApprovableTags)} (gatehouse bindings <workspace> lists every kind)`,
    );
  }
}

/** Enabling a rule for a kind its gatekeeper says can never be auto-approved (so it would never fire). */
export class ActionKindNotAutoApprovable extends ApprovalError {
  readonly code = "ActionKindNotAutoApprovable";
  override name = "ActionKindNotAutoApprovable";
  /**
   * @param reason the gatekeeper's `not_auto_approvable_reason`.
   * @param autoApprovableTags the binding's tags a rule may enable.
   */
  constructor(
    readonly binding: string,
    readonly tag: string,
    readonly reason: string,
    readonly autoApprovableTags: readonly string[],
  ) {
    super(
      `action_kind_tag: "${tag}" on binding "${binding}" can never be auto-approved (${reason || "its gatekeeper never marks it auto-approvable"}), so a rule for it would never fire; its auto-approvable tags: ${tagList(autoApprovableTags)}`,
    );
  }
}

/**
 * Enabling a rule on a binding whose ResourceIntroduced predates published action kinds: which tags
 * can fire is unknown, so the rule is refused rather than stored to maybe never fire.
 */
export class ActionKindsNotPublished extends ApprovalError {
  readonly code = "ActionKindsNotPublished";
  override name = "ActionKindsNotPublished";
  constructor(
    readonly binding: string,
    readonly tag: string,
  ) {
    super(
      `binding "${binding}" was introduced before its gatekeeper published its action kinds, so whether a rule for "${tag}" could ever fire is unknown; remove it and introduce the resource again (gatehouse disconnect <workspace> ${binding}, then gatehouse connect <workspace> <url>) to publish them, or introduce it under a new name (--name)`,
    );
  }
}

/**
 * The binding is not introduced in the workspace (or was removed). With `endedGrant`, the caller's
 * token names a grant of that binding that was removed (the name may have been introduced again).
 */
export class UnknownBinding extends ApprovalError {
  readonly code = "UnknownBinding";
  override name = "UnknownBinding";
  constructor(
    readonly binding: string,
    readonly endedGrant?: number,
  ) {
    super(
      endedGrant === undefined
        ? `binding: "${binding}" is not a binding of this workspace; introduce the resource first`
        : `binding: "${binding}" was removed from this workspace after this execution started (grant ${endedGrant} ended); nothing was recorded`,
    );
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

/**
 * A decision bound to descriptions (Approve.descriptionDigests) names a digest that is not the
 * stored description's: the person was shown another version, or another action.
 */
export class DescriptionDigestMismatch extends ApprovalError {
  readonly code = "DescriptionDigestMismatch";
  override name = "DescriptionDigestMismatch";
  constructor(readonly actionId: number) {
    super(
      `description_digests: the digest sent for action ${actionId} is not the digest of its description (you were shown another version or another action); reload it, review it again and send its description_digest; nothing was approved`,
    );
  }
}

/**
 * A decision bound to descriptions would approve an action the person was not shown (no digest
 * for it, e.g. a dependency pulled in by include_dependencies).
 */
export class DescriptionNotShown extends ApprovalError {
  readonly code = "DescriptionNotShown";
  override name = "DescriptionNotShown";
  constructor(readonly actionId: number) {
    super(
      `description_digests: the decision would approve action ${actionId} but carries no digest for it; show it to the person and send its description_digest too; nothing was approved`,
    );
  }
}

/** WithdrawApproval named an action whose approval cannot be taken back (claimed, final or pending). */
export class ApprovalNotWithdrawable extends ApprovalError {
  readonly code = "ApprovalNotWithdrawable";
  override name = "ApprovalNotWithdrawable";
  /** @param detail why, e.g. "is already claimed for apply (applying); it cannot be withdrawn". */
  constructor(
    readonly actionId: number,
    readonly detail: string,
  ) {
    super(`action ${actionId} ${detail}; nothing was withdrawn`);
  }
}
