/**
 * Typed domain errors of the MCP gatekeeper. Each message names the field at fault and the fix,
 * and never contains a token, a secret or data read from an external system beyond what the
 * caller sent. They are mapped to gRPC status codes in one place: `grpc-status.ts`.
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

/** The resource URL (scheme, host, path) is malformed or uses a refused scheme. */
export class InvalidResourceUrl extends GatekeeperError {
  override name = "InvalidResourceUrl";
  readonly code = "invalid_argument" as const;
}

/** A scope fragment (`#tool=a&tool=b`, `#server=x`) could not be parsed; parsing fails closed. */
export class MalformedScopeFragment extends GatekeeperError {
  override name = "MalformedScopeFragment";
  readonly code = "invalid_argument" as const;
}

/** `mcp://<name>` names no server in the admin registry. */
export class UnknownServer extends GatekeeperError {
  override name = "UnknownServer";
  readonly code = "not_found" as const;
}

/** A call names a tool outside the binding's scope, or the scope names a tool the server lacks. */
export class ScopeViolation extends GatekeeperError {
  override name = "ScopeViolation";
  readonly code = "permission_denied" as const;
}

/** Tool arguments do not match the tool's input JSON Schema. */
export class ArgumentsInvalid extends GatekeeperError {
  override name = "ArgumentsInvalid";
  readonly code = "invalid_argument" as const;
}

/** A binding name, session-open message or other request field is invalid. */
export class InvalidRequest extends GatekeeperError {
  override name = "InvalidRequest";
  readonly code = "invalid_argument" as const;
}

/** `dependsOn` or `getActionResult` names an action id this session did not hand out. */
export class UnknownAction extends GatekeeperError {
  override name = "UnknownAction";
  readonly code = "not_found" as const;
}

/** The MCP server could not be reached or its connection broke. */
export class ServerUnavailable extends GatekeeperError {
  override name = "ServerUnavailable";
  readonly code = "unavailable" as const;
}

/** A read tool returned `isError: true` or threw; nothing was recorded. */
export class ToolFailed extends GatekeeperError {
  override name = "ToolFailed";
  readonly code = "failed_precondition" as const;
}

/** The approval service refused or failed a call (e.g. AuthorizeObservation); no data is returned. */
export class ApprovalRefused extends GatekeeperError {
  override name = "ApprovalRefused";
  readonly code = "failed_precondition" as const;
}
