/** How activity errors become Temporal failures: domain refusals are final, the rest is retried. */
import { ApprovalError } from "@gatehouse/approval-core";
import { ApplicationFailure } from "@temporalio/activity";

/**
 * Wraps a domain error (ActionNotFound, WorkspaceNotFound, ActionStateConflict...) as a
 * non-retryable failure whose type is the error's code; other errors pass through (retryable).
 */
export function asActivityFailure(err: unknown): unknown {
  if (err instanceof ApprovalError) return ApplicationFailure.nonRetryable(err.message, err.code);
  return err;
}
