/**
 * Prometheus metrics of the approval service (prom-client), on a private registry so several
 * instances (tests, `gatehouse dev`) do not collide. Apply latency itself is the worker's metric;
 * this service measures what an approver waits for: decision → final outcome.
 */
import { Counter, collectDefaultMetrics, Histogram, Registry } from "prom-client";
import type { LifecycleMetrics } from "./lifecycle/metrics-hooks.ts";

/** A registry with `gatehouse_approval_decisions_total{outcome}` and `gatehouse_approval_decision_seconds{kind,outcome}`. */
export function createMetrics(options: { defaultMetrics?: boolean } = {}): {
  registry: Registry;
  lifecycle: LifecycleMetrics;
} {
  const registry = new Registry();
  if (options.defaultMetrics) collectDefaultMetrics({ register: registry });
  const decisions = new Counter({
    name: "gatehouse_approval_decisions_total",
    help: "Decision outcomes: applied, failed, outcome_unknown, rejected, cascaded, auto_approved, queued",
    labelNames: ["outcome"],
    registers: [registry],
  });
  const latency = new Histogram({
    name: "gatehouse_approval_decision_seconds",
    help: "Time from sending a decision to its action workflow until the final outcome, by kind and outcome",
    labelNames: ["kind", "outcome"],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  return {
    registry,
    lifecycle: {
      decision: (outcome, count = 1) => decisions.inc({ outcome }, count),
      decisionLatency: (seconds, kind, outcome) => latency.observe({ kind, outcome }, seconds),
    },
  };
}
