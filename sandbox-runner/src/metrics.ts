import { Counter, Gauge, Histogram, Registry } from "prom-client";

/** Reasons an execution was stopped from outside the snippet. */
export type KillReason = "timeout" | "heap" | "crash" | "cancelled";

/** Prometheus metrics of one runner instance (own registry, so several runners can share a process). */
export interface RunnerMetrics {
  registry: Registry;
  /** Seconds from `start` received to result sent, including sandbox start; label outcome=ok|error. */
  executionSeconds: Histogram<"outcome" | "sandbox">;
  /** Executions stopped by a limit or a crash, by reason. */
  kills: Counter<"reason">;
  /** Executions in flight. */
  active: Gauge;
}

/** Creates the runner's metrics in a fresh registry. */
export function createMetrics(): RunnerMetrics {
  const registry = new Registry();
  return {
    registry,
    executionSeconds: new Histogram({
      name: "gatehouse_sandbox_execution_seconds",
      help: "Execution latency from start message to result, including sandbox start-up",
      labelNames: ["outcome", "sandbox"],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers: [registry],
    }),
    kills: new Counter({
      name: "gatehouse_sandbox_kills_total",
      help: "Executions stopped by a limit or a crash, by reason",
      labelNames: ["reason"],
      registers: [registry],
    }),
    active: new Gauge({
      name: "gatehouse_sandbox_active_executions",
      help: "Executions in flight",
      registers: [registry],
    }),
  };
}
