/** Kernel metrics (Prometheus): executions by outcome and their latency, open binding watches, review notifications. */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

export interface KernelMetrics {
  registry: Registry;
  /** Labels: outcome = ok | error | unavailable. */
  executions: Counter<"outcome">;
  /** Whole ExecuteCode latency, seconds. */
  executionSeconds: Histogram;
  /** WatchBindings streams open now (about one per connected MCP session). */
  bindingWatches: Gauge;
  /**
   * Turns whose review notification was handled, by outcome: delivered (every send went out),
   * failed (at least one send failed), no_recipient (nobody asked for one), skipped (the turn could not be read).
   */
  reviewNotifications: Counter<"outcome">;
}

export function createKernelMetrics(): KernelMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "gatehouse_kernel_" });
  return {
    registry,
    executions: new Counter({
      name: "gatehouse_kernel_executions_total",
      help: "ExecuteCode calls by outcome",
      labelNames: ["outcome"],
      registers: [registry],
    }),
    executionSeconds: new Histogram({
      name: "gatehouse_kernel_execution_seconds",
      help: "ExecuteCode latency including the sandbox and binding calls",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    bindingWatches: new Gauge({
      name: "gatehouse_kernel_binding_watches",
      help: "WatchBindings streams open now (about one per connected MCP session)",
      registers: [registry],
    }),
    reviewNotifications: new Counter({
      name: "gatehouse_kernel_review_notifications_total",
      help: "Turns with writes waiting whose review notification was handled, by outcome (delivered, failed, no_recipient, skipped)",
      labelNames: ["outcome"],
      registers: [registry],
    }),
  };
}
