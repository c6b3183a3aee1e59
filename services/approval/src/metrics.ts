/**
 * Prometheus metrics of the approval service (prom-client), on a private registry so several
 * instances (tests, `gatehouse dev`) do not collide.
 */
import { Counter, collectDefaultMetrics, Histogram, Registry } from "prom-client";
import type { LifecycleMetrics } from "./lifecycle/metrics-hooks.ts";

/** A registry with `gatehouse_approval_decisions_total{outcome}` and `gatehouse_approval_apply_seconds{outcome}`. */
export function createMetrics(options: { defaultMetrics?: boolean } = {}): {
  registry: Registry;
  lifecycle: LifecycleMetrics;
} {
  const registry = new Registry();
  if (options.defaultMetrics) collectDefaultMetrics({ register: registry });
  const decisions = new Counter({
    name: "gatehouse_approval_decisions_total",
    help: "Decision outcomes: approved, auto_approved, rejected, cascaded, applied, failed, outcome_unknown",
    labelNames: ["outcome"],
    registers: [registry],
  });
  const apply = new Histogram({
    name: "gatehouse_approval_apply_seconds",
    help: "Duration of gatekeeper ApplyAction calls in seconds, by outcome",
    labelNames: ["outcome"],
    buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
    registers: [registry],
  });
  return {
    registry,
    lifecycle: {
      decision: (outcome, count = 1) => decisions.inc({ outcome }, count),
      applyLatency: (seconds, outcome) => apply.observe({ outcome }, seconds),
    },
  };
}
