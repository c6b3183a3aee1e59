/**
 * The apply protocol's server half (@gatehouse/apply-protocol) with the kit's errors plugged in: a
 * gatekeeper's apply function throws `NotSent` for "not sent" (the outcome `{ok: false}`, recorded
 * failed), any `GatekeeperError` for its own status, and anything else ends as INTERNAL, logged
 * without its message (as `unaryHandler` does). Gatekeepers use these through `gatekeeperHandlers`
 * or directly:
 *
 * ```ts
 * applyAction: applyStreamHandler(deps, (req, { deadline }) => applyAction(req, deadline)),
 * ```
 */
import {
  type ApplyContext,
  type ApplyErrors,
  type ApplyLogger,
  type ApplyMetrics,
  applyRunHandler as protocolRunHandler,
  applyStreamHandler as protocolStreamHandler,
  type RunUnits,
} from "@gatehouse/apply-protocol";
import type {
  ApplyActionProgress,
  ApplyActionRequest,
  ApplyActionResponse,
  ApplyActionsProgress,
  ApplyActionsRequest,
} from "@gatehouse/proto";
import type { handleServerStreamingCall } from "@grpc/grpc-js";
import { NotSent } from "./apply-outcome.ts";
import { InvalidRequest } from "./errors.ts";
import { toServiceError } from "./grpc-status.ts";
import { logUnexpectedError } from "./unary.ts";

/** How the kit's errors meet the apply protocol. */
export const KIT_APPLY_ERRORS: ApplyErrors = {
  notSentMessage: (err) => (err instanceof NotSent ? err.message : undefined),
  toStatus: toServiceError,
  logUnexpected: logUnexpectedError,
  invalidRequest: (message) => new InvalidRequest(message),
};

/** Metrics and logger of the kit's apply handlers (a `HandlerDeps` fits). */
export interface KitApplyDeps {
  metrics: ApplyMetrics;
  logger: ApplyLogger;
}

/**
 * The ApplyAction handler (apply-protocol's `applyStreamHandler`) with the kit's errors.
 * @param fn performs the action once; resolves with the known outcome; throws `NotSent` when
 *   nothing reached the system.
 * @param progressEveryMs interval of `running` messages (default APPLY_PROGRESS_EVERY_MS).
 */
export function applyStreamHandler(
  deps: KitApplyDeps,
  fn: (req: ApplyActionRequest, ctx: ApplyContext) => Promise<ApplyActionResponse>,
  progressEveryMs?: number,
): handleServerStreamingCall<ApplyActionRequest, ApplyActionProgress> {
  return protocolStreamHandler({ ...deps, errors: KIT_APPLY_ERRORS }, fn, progressEveryMs);
}

/**
 * The ApplyActions handler (apply-protocol's `applyRunHandler`) with the kit's errors: the run in
 * order through the same per-action `fn`, stopping at the first failure; `units` groups actions
 * performed in one external call.
 */
export function applyRunHandler(
  deps: KitApplyDeps,
  fn: (req: ApplyActionRequest, ctx: ApplyContext) => Promise<ApplyActionResponse>,
  progressEveryMs?: number,
  units?: RunUnits,
): handleServerStreamingCall<ApplyActionsRequest, ApplyActionsProgress> {
  return protocolRunHandler({ ...deps, errors: KIT_APPLY_ERRORS }, fn, progressEveryMs, units);
}
