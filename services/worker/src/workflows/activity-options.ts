/** Activity timeouts and retry policies of the lifecycle workflows (pure constants). */
import type { ActivityOptions, LocalActivityOptions } from "@temporalio/workflow";

/**
 * Stream reads and appends, run as LOCAL activities: they are short appends to the event store, so
 * running them inside the workflow task saves a task-queue round trip each (on the dev server about
 * 40 ms per step). Transient errors (SQLite busy, I/O) are retried without a limit, because the
 * decision or outcome they carry must eventually be recorded; domain refusals are results, not errors.
 * Every append carries an expected revision, so a local activity re-run after a worker crash cannot
 * record a decision twice.
 */
export const STREAM_LOCAL_ACTIVITY: LocalActivityOptions = {
  startToCloseTimeout: "30s",
  retry: { initialInterval: "1s", backoffCoefficient: 2, maximumInterval: "30s" },
};

/** Attempts of the apply activity (gatekeeper unreachable, dependencies not applied yet). */
export const APPLY_MAX_ATTEMPTS = 10;

/**
 * The apply: retried only for errors raised before the claim; heartbeats every second while the
 * gatekeeper reports the call running, so a killed worker's attempt times out after 5 s and the
 * retry (on a live worker) finds the unmatched claim and records "outcome unknown". How long one
 * apply may run is the worker's per-gatekeeper GATEKEEPER_APPLY_MAX (at most 12 h, src/apply-max.ts);
 * the start-to-close timeout is only a backstop above that limit, so it never cuts a call short.
 */
export const APPLY_ACTIVITY: ActivityOptions = {
  startToCloseTimeout: "13h",
  heartbeatTimeout: "5s",
  retry: {
    initialInterval: "1s",
    backoffCoefficient: 2,
    maximumInterval: "30s",
    maximumAttempts: APPLY_MAX_ATTEMPTS,
    nonRetryableErrorTypes: ["ApplyRefused"],
  },
};

/** Best-effort notices to gatekeepers and turn signals: a few quick attempts. */
export const NOTICE_ACTIVITY: ActivityOptions = {
  startToCloseTimeout: "15s",
  retry: { initialInterval: "1s", backoffCoefficient: 2, maximumAttempts: 5 },
};

/** The metrics observation (local, in-process). */
export const METRICS_LOCAL_ACTIVITY: LocalActivityOptions = {
  startToCloseTimeout: "5s",
  retry: { maximumAttempts: 1 },
};
