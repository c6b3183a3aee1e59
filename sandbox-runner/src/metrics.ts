import { Counter, Gauge, Histogram, Registry } from "prom-client";

/**
 * Reasons an execution was stopped (or, for "output", cut) from outside the snippet:
 * timeout (wall time), heap (isolate heap), output (console cut at the cap, or a return value too large),
 * crash (the sandbox died), calls (binding call cap), message-size (capnweb frame cap), cancelled (caller left).
 */
export type KillReason =
  | "timeout"
  | "heap"
  | "output"
  | "crash"
  | "calls"
  | "message-size"
  | "capability"
  | "cancelled";

/** The pool's share of the metrics. */
export interface PoolMetrics {
  /** Sandboxes by state: starting, warm (unassigned, ready), leased (a workspace's). */
  sandboxes: Gauge<"state">;
  /** All sandboxes (the pool size). */
  size: Gauge;
  /** Pool events: started, start_failed, reaped, evicted, crashed, killed. */
  events: Counter<"event">;
  /** Seconds from asking for a sandbox to its isolate host reporting ready. */
  startSeconds: Histogram;
  /**
   * Seconds from a workspace needing a sandbox to holding one, ready and claimed; source=warm when a
   * pre-started one was free, cold when it had to wait for one to start.
   */
  claimSeconds: Histogram<"source">;
  /** Sandboxes running an execution now. */
  busy: Gauge;
  /** Sandboxes the backend could not start (pod creation refused, image pull failed, …), by reason. */
  startFailures: Counter<"reason">;
}

/** Prometheus metrics of one runner instance (own registry, so several runners can share a process). */
export interface RunnerMetrics extends PoolMetrics {
  registry: Registry;
  /**
   * Seconds from `start` received to result sent, including the wait in the workspace's queue and a
   * sandbox start when there was no warm one; labels outcome=ok|error, sandbox=gvisor|none, and
   * start=warm (its sandbox was ready: the executeCode-on-a-warm-sandbox SLO), cold (it waited for a
   * sandbox to start) or none (it ended before it had one).
   */
  executionSeconds: Histogram<"outcome" | "sandbox" | "start">;
  /** Executions stopped by a limit or a crash (or whose output was cut), by reason (see KillReason). */
  kills: Counter<"reason">;
  /** Executions admitted (queued in their workspace's lane or running). */
  active: Gauge;
  /** Executions waiting for admission (all SANDBOX_MAX_CONCURRENT slots taken). */
  waiting: Gauge;
}

/** Creates the runner's metrics in a fresh registry. */
export function createMetrics(): RunnerMetrics {
  const registry = new Registry();
  return {
    registry,
    executionSeconds: new Histogram({
      name: "gatehouse_sandbox_execution_seconds",
      help: "Execution latency from start message to result, including queueing and any sandbox start (start=warm|cold|none)",
      labelNames: ["outcome", "sandbox", "start"],
      buckets: [0.002, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers: [registry],
    }),
    kills: new Counter({
      name: "gatehouse_sandbox_kills_total",
      help: "Executions stopped by a limit or a crash, or whose output was cut (reason=output), by reason",
      labelNames: ["reason"],
      registers: [registry],
    }),
    active: new Gauge({
      name: "gatehouse_sandbox_active_executions",
      help: "Executions admitted (queued in their workspace's lane or running)",
      registers: [registry],
    }),
    waiting: new Gauge({
      name: "gatehouse_sandbox_waiting_executions",
      help: "Executions waiting for admission because every SANDBOX_MAX_CONCURRENT slot is taken",
      registers: [registry],
    }),
    sandboxes: new Gauge({
      name: "gatehouse_sandbox_pool_sandboxes",
      help: "Sandboxes by state: starting, warm (ready, unassigned) or leased (a workspace's)",
      labelNames: ["state"],
      registers: [registry],
    }),
    size: new Gauge({
      name: "gatehouse_sandbox_pool_size",
      help: "Sandboxes in the pool, all states",
      registers: [registry],
    }),
    events: new Counter({
      name: "gatehouse_sandbox_pool_events_total",
      help: "Pool events: started, start_failed, reaped, evicted, crashed, killed",
      labelNames: ["event"],
      registers: [registry],
    }),
    startSeconds: new Histogram({
      name: "gatehouse_sandbox_start_seconds",
      help: "Seconds from asking for a sandbox to its isolate host being ready",
      buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30],
      registers: [registry],
    }),
    claimSeconds: new Histogram({
      name: "gatehouse_sandbox_claim_seconds",
      help: "Seconds from a workspace needing a sandbox to holding one ready and claimed (source=warm|cold)",
      labelNames: ["source"],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    busy: new Gauge({
      name: "gatehouse_sandbox_pool_busy",
      help: "Sandboxes running an execution now",
      registers: [registry],
    }),
    startFailures: new Counter({
      name: "gatehouse_sandbox_start_failures_total",
      help: "Sandboxes the backend could not start, by reason (e.g. Forbidden, RuntimeClassNotFound, ErrImagePull, Timeout)",
      labelNames: ["reason"],
      registers: [registry],
    }),
  };
}
