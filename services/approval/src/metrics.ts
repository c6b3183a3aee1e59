/**
 * Prometheus metrics of the approval service (prom-client), on a private registry so several
 * instances (tests, `gatehouse dev`) do not collide. Apply latency itself is the worker's metric;
 * this service measures what an approver waits for (decision → final outcome), its gRPC calls
 * (AuthorizeObservation's latency is the observation-append SLO) and the pending backlog.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";
import type { LifecycleMetrics } from "./lifecycle/metrics-hooks.ts";

/** What the gRPC handlers record per call (server.ts `unary`). */
export interface RpcMetrics {
  /** Calls by method (as proto spells it) and status code name ("OK", "NOT_FOUND", ...). */
  rpcs: Counter<"method" | "code">;
  /** Call latency by method, seconds. */
  rpcSeconds: Histogram<"method">;
}

/**
 * A registry with `gatehouse_approval_decisions_total{outcome}`, `gatehouse_approval_decision_seconds{kind,outcome}`,
 * `gatehouse_approval_rpcs_total{method,code}`, `gatehouse_approval_rpc_seconds{method}`,
 * `gatehouse_approval_pending_actions` and `gatehouse_approval_oldest_pending_seconds`.
 */
export function createMetrics(options: { defaultMetrics?: boolean } = {}): {
  registry: Registry;
  lifecycle: LifecycleMetrics;
  rpc: RpcMetrics;
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
  const pending = new Gauge({
    name: "gatehouse_approval_pending_actions",
    help: "Actions waiting for a decision in every workspace, at the last expiry sweep",
    registers: [registry],
  });
  const oldestPending = new Gauge({
    name: "gatehouse_approval_oldest_pending_seconds",
    help: "Age of the oldest action waiting for a decision, at the last expiry sweep (0 when none), seconds",
    registers: [registry],
  });
  const rpc: RpcMetrics = {
    rpcs: new Counter({
      name: "gatehouse_approval_rpcs_total",
      help: "gRPC calls handled (ApprovalQueue and Decisions), by method and status code",
      labelNames: ["method", "code"],
      registers: [registry],
    }),
    rpcSeconds: new Histogram({
      name: "gatehouse_approval_rpc_seconds",
      help: "gRPC unary call latency by method, seconds (AuthorizeObservation: the ObservationRecorded append)",
      labelNames: ["method"],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    }),
  };
  return {
    registry,
    rpc,
    lifecycle: {
      decision: (outcome, count = 1) => decisions.inc({ outcome }, count),
      decisionLatency: (seconds, kind, outcome) => latency.observe({ kind, outcome }, seconds),
      backlog: (count, oldestSeconds) => {
        pending.set(count);
        oldestPending.set(oldestSeconds);
      },
    },
  };
}
