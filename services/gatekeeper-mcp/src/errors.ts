/**
 * Typed domain errors of the MCP gatekeeper. Each message names the field at fault and the fix,
 * and never contains a token, a secret or data read from an external system beyond what the
 * caller sent. They extend the kit's `GatekeeperError`, so the kit's `toServiceError` maps them to
 * gRPC status codes in one place and its session plumbing keeps their message across capnweb.
 * The errors every gatekeeper shares (InvalidRequest, UnknownAction, ApprovalRefused) come from
 * the kit and are re-exported here.
 */
import { GatekeeperError } from "@gatehouse/gatekeeper-kit";

export { ApprovalRefused, GatekeeperError, InvalidRequest, UnknownAction } from "@gatehouse/gatekeeper-kit";

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

/**
 * PrepareRevert was asked for an MCP action: a tool call has no generic inverse, so this
 * gatekeeper never stages one (the agent makes the compensating call, which is approved as usual).
 */
export class RevertUnsupported extends GatekeeperError {
  override name = "RevertUnsupported";
  readonly code = "failed_precondition" as const;
}
