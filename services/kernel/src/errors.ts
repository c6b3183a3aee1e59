/** Maps kernel errors (and errors passed through from gatekeepers) to gRPC status codes, in one place. */

import { StoreUnavailable, WrongExpectedRevision } from "@gatehouse/event-store";
import { type ServiceError, status } from "@grpc/grpc-js";
import { ConnectionRequestConflict, ConnectionRequestNotFound } from "./connections.ts";
import {
  BindingAlreadyExists,
  BindingNotFound,
  InvalidArgument,
  MemberAlreadyAdded,
  NoGatekeeperForResource,
  NotAMember,
  OwnerNotRemovable,
  PermissionDenied,
  WorkspaceNotFound,
} from "./domain/errors.ts";
import { ExecutionNotFound } from "./execution-view.ts";
import { TurnNotFound } from "./turns.ts";

/** A gRPC-shaped error: `{code, details}`. */
export function toServiceError(err: unknown): Partial<ServiceError> {
  if (isServiceError(err)) {
    // An error passed through from a gatekeeper: UNAVAILABLE there (e.g. an MCP endpoint that cannot
    // be reached) is not the kernel being unavailable, so callers must not read it as such.
    const code = err.code === status.UNAVAILABLE ? status.FAILED_PRECONDITION : err.code;
    const details = err.code === status.UNAVAILABLE ? `gatekeeper: ${err.details}` : err.details;
    return { code, details, message: details };
  }
  const e = err instanceof Error ? err : new Error(String(err));
  if (e instanceof StoreUnavailable) {
    // All-or-nothing on every backend: nothing was half-appended, so the caller may retry.
    const details =
      "the event store cannot be reached; nothing was recorded, retry the request (see the kernel's logs)";
    return { code: status.UNAVAILABLE, details, message: details };
  }
  const code =
    e instanceof WorkspaceNotFound ||
    e instanceof TurnNotFound ||
    e instanceof ExecutionNotFound ||
    e instanceof BindingNotFound ||
    e instanceof ConnectionRequestNotFound ||
    e instanceof NotAMember
      ? status.NOT_FOUND
      : e instanceof BindingAlreadyExists || e instanceof MemberAlreadyAdded
        ? status.ALREADY_EXISTS
        : e instanceof InvalidArgument
          ? status.INVALID_ARGUMENT
          : e instanceof NoGatekeeperForResource ||
              e instanceof ConnectionRequestConflict ||
              e instanceof OwnerNotRemovable
            ? status.FAILED_PRECONDITION
            : e instanceof PermissionDenied
              ? status.PERMISSION_DENIED
              : e instanceof WrongExpectedRevision
                ? status.ABORTED
                : status.INTERNAL;
  return { code, details: e.message, message: e.message };
}

function isServiceError(err: unknown): err is ServiceError {
  return typeof err === "object" && err !== null && "code" in err && "details" in err && "metadata" in err;
}
