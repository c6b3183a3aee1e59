/**
 * Errors of the git gatekeeper. Each extends the kit's `GatekeeperError`, so it keeps its message
 * across capnweb and maps to a gRPC status in one place. Messages name the part at fault and never
 * quote file content.
 */
import { GatekeeperError } from "@gatehouse/gatekeeper-kit";

export { ApprovalRefused, GatekeeperError, InvalidRequest, UnknownAction } from "@gatehouse/gatekeeper-kit";

/** The resource URL or its fragment is malformed, or names a repository outside the allowed roots. */
export class InvalidResourceUrl extends GatekeeperError {
  override name = "InvalidResourceUrl";
  readonly code = "invalid_argument" as const;
}

/** A path or branch outside the binding's scope (`#path=`, `#branch=`), or escaping it (`..`, symlink). */
export class ScopeViolation extends GatekeeperError {
  override name = "ScopeViolation";
  readonly code = "permission_denied" as const;
}

/** A file is larger than the read limit. */
export class FileTooLarge extends GatekeeperError {
  override name = "FileTooLarge";
  readonly code = "failed_precondition" as const;
}

/** A path, ref or branch does not exist in the repository. */
export class NotFound extends GatekeeperError {
  override name = "NotFound";
  readonly code = "not_found" as const;
}

/** The action cannot be reverted by this gatekeeper (not a commit, or not applied). */
export class NotRevertable extends GatekeeperError {
  override name = "NotRevertable";
  readonly code = "failed_precondition" as const;
}
