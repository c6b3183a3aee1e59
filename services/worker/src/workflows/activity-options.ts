/** Activity timeouts and retry policies of the lifecycle workflows (pure constants). */
import type { ActivityOptions, LocalActivityOptions } from "@temporalio/workflow";

/**
 * Stream appends run as LOCAL activities (the turn outcome): short appends to the event store,
 * retried without a limit on transient errors; every append carries an expected revision.
 */
export const STREAM_LOCAL_ACTIVITY: LocalActivityOptions = {
  startToCloseTimeout: "30s",
  retry: { initialInterval: "1s", backoffCoefficient: 2, maximumInterval: "30s" },
};

/** Attempts of a run while its gatekeeper is unreachable (nothing is claimed meanwhile). */
export const APPLY_MAX_ATTEMPTS = 10;

/**
 * One run (claim, ApplyActions, outcomes): heartbeats every second, so a killed worker's attempt
 * times out after 5 s and the retry (on a live worker) finds the claims without outcome and
 * records "outcome unknown" — never a second send. How long one action may run is the worker's
 * per-gatekeeper GATEKEEPER_APPLY_MAX (at most 12 h); the start-to-close timeout is a backstop.
 */
export const APPLY_RUN_ACTIVITY: ActivityOptions = {
  startToCloseTimeout: "13h",
  heartbeatTimeout: "5s",
  retry: {
    initialInterval: "1s",
    backoffCoefficient: 2,
    maximumInterval: "30s",
    maximumAttempts: APPLY_MAX_ATTEMPTS,
    nonRetryableErrorTypes: ["ApplyRefused", "WorkspaceNotFound"],
  },
};

/** Best-effort notices to gatekeepers, turn signals and wakes: a few quick attempts. */
export const NOTICE_ACTIVITY: ActivityOptions = {
  startToCloseTimeout: "60s",
  retry: { initialInterval: "1s", backoffCoefficient: 2, maximumAttempts: 5 },
};

/** The metrics observation (local, in-process). */
export const METRICS_LOCAL_ACTIVITY: LocalActivityOptions = {
  startToCloseTimeout: "5s",
  retry: { maximumAttempts: 1 },
};
