/**
 * The one mapping from errors to gRPC status codes for this service. Domain errors carry messages
 * that name the field and the fix; anything unexpected becomes INTERNAL with a generic message
 * (the details go to the log, never to the caller).
 */

import {
  ActionKindNotAutoApprovable,
  ActionKindsNotPublished,
  ActionNotFound,
  ActionNotPending,
  ActionNotRevertible,
  ActionStateConflict,
  ApprovalError,
  ApprovalNotWithdrawable,
  DependenciesUndecided,
  DescriptionDigestMismatch,
  DescriptionNotShown,
  DuplicateLocalId,
  DuplicateObservationRequest,
  InvalidField,
  NotCallersAction,
  ReasonRequired,
  RuleNotFound,
  UnknownActionKind,
  UnknownBinding,
  UnknownDependency,
  WorkspaceLatched,
  WorkspaceNotFound,
} from "@gatehouse/approval-core";
import { CallerTokenInvalid } from "@gatehouse/caller-token";
import { StoreUnavailable, WrongExpectedRevision } from "@gatehouse/event-store";
import { ReadModelBehind } from "@gatehouse/read-model";
import { Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { ActionLifecycleFailed, LifecycleEngineUnavailable } from "./adapters/engine-errors.ts";
import { RevertNotPrepared } from "./revert.ts";

/** A gRPC status for `err`; `expected` is false when the error is a bug or an outage worth logging. */
export function toStatus(err: unknown): { code: status; details: string; expected: boolean } {
  if (err instanceof CallerTokenInvalid)
    return { code: status.UNAUTHENTICATED, details: `caller_token: ${err.message}`, expected: true };
  if (err instanceof ApprovalError) return { code: domainCode(err), details: err.message, expected: true };
  if (err instanceof LifecycleEngineUnavailable)
    return { code: status.UNAVAILABLE, details: err.message, expected: false };
  if (err instanceof ActionLifecycleFailed)
    return { code: status.INTERNAL, details: err.message, expected: false };
  if (err instanceof RevertNotPrepared) {
    if (err.kind === "refused")
      return { code: status.FAILED_PRECONDITION, details: err.message, expected: true };
    if (err.kind === "invalid") return { code: status.INTERNAL, details: err.message, expected: false };
    return { code: status.UNAVAILABLE, details: err.message, expected: false };
  }
  if (err instanceof StoreUnavailable) {
    // All-or-nothing on every backend: nothing was half-appended, so the caller may retry.
    return {
      code: status.UNAVAILABLE,
      details:
        "the event store cannot be reached; nothing was recorded, retry the request (see the approval service's logs)",
      expected: false,
    };
  }
  if (err instanceof ReadModelBehind) {
    return {
      code: status.UNAVAILABLE,
      details: `the read model is behind the event store (${err.message}); retry the request`,
      expected: false,
    };
  }
  if (err instanceof WrongExpectedRevision) {
    return {
      code: status.ABORTED,
      details: "the workspace changed concurrently too many times while deciding; retry the request",
      expected: true,
    };
  }
  return {
    code: status.INTERNAL,
    details: "internal error in the approval service (see its logs)",
    expected: false,
  };
}

function domainCode(err: ApprovalError): status {
  if (err instanceof WorkspaceNotFound || err instanceof ActionNotFound || err instanceof NotCallersAction)
    return status.NOT_FOUND;
  if (err instanceof UnknownBinding || err instanceof RuleNotFound) return status.NOT_FOUND;
  if (err instanceof ActionNotPending) return err.lostRace ? status.ABORTED : status.FAILED_PRECONDITION;
  if (
    err instanceof DependenciesUndecided ||
    err instanceof WorkspaceLatched ||
    err instanceof ActionStateConflict ||
    err instanceof ActionNotRevertible ||
    err instanceof ActionKindNotAutoApprovable ||
    err instanceof ActionKindsNotPublished ||
    err instanceof DescriptionDigestMismatch ||
    err instanceof DescriptionNotShown ||
    err instanceof ApprovalNotWithdrawable
  ) {
    return status.FAILED_PRECONDITION;
  }
  if (err instanceof DuplicateLocalId || err instanceof DuplicateObservationRequest)
    return status.ALREADY_EXISTS;
  if (
    err instanceof ReasonRequired ||
    err instanceof InvalidField ||
    err instanceof UnknownDependency ||
    err instanceof UnknownActionKind
  ) {
    return status.INVALID_ARGUMENT;
  }
  return status.FAILED_PRECONDITION;
}

/** A grpc-js ServiceError for `err`. */
export function toServiceError(err: unknown): ServiceError {
  const { code, details } = toStatus(err);
  return Object.assign(new Error(details), { code, details, metadata: new Metadata() }) as ServiceError;
}
