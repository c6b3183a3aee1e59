/**
 * Typed errors every gatekeeper shares. Each message names the field at fault and the fix, and
 * never contains a token, a secret or data read from an external system beyond what the caller
 * sent. A gatekeeper adds its own errors by extending `GatekeeperError`; all of them map to gRPC
 * status codes in one place (`grpc-status.ts`) and keep their message when crossing capnweb.
 */

/** Base class: every gatekeeper error carries a stable `code` used by the status mapping. */
export abstract class GatekeeperError extends Error {
  abstract readonly code:
    | "invalid_argument"
    | "not_found"
    | "permission_denied"
    | "failed_precondition"
    | "unavailable";
}

/** A binding name, session-open message or other request field is invalid. */
export class InvalidRequest extends GatekeeperError {
  override name = "InvalidRequest";
  readonly code = "invalid_argument" as const;
}

/** An action id or local id (dependsOn, getActionResult, a provisional id) is unknown to this session. */
export class UnknownAction extends GatekeeperError {
  override name = "UnknownAction";
  readonly code = "not_found" as const;
}

/** The approval service refused or failed a call (e.g. AuthorizeObservation); no data is returned. */
export class ApprovalRefused extends GatekeeperError {
  override name = "ApprovalRefused";
  readonly code = "failed_precondition" as const;
}

/**
 * A reply would not fit one Cap'n Web frame under the sandbox's frame cap (SANDBOX_MAX_FRAME_BYTES);
 * it was refused before anything was recorded (see frame-budget.ts).
 */
export class ReplyTooLarge extends GatekeeperError {
  override name = "ReplyTooLarge";
  readonly code = "failed_precondition" as const;
}
