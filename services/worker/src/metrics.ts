/** Prometheus metrics of the lifecycle worker (exported on /metrics by main.ts). */
import { collectDefaultMetrics, Histogram, Registry } from "prom-client";

/** The worker's metrics and the registry holding them. */
export interface WorkerMetrics {
  registry: Registry;
  /** Activity latency in seconds, labelled by activity name and outcome ("ok" | "error"). */
  activitySeconds: Histogram<"activity" | "outcome">;
  /**
   * Workflow end-to-end latency in seconds (from the workflow's start to its last step), labelled by
   * workflow type and final outcome ("applied", "failed", "rejected", "resumed", "completed").
   */
  workflowSeconds: Histogram<"workflow" | "outcome">;
  /**
   * Seconds from an action's ActionApproved (its decidedAt) to the append of its outcome, by outcome:
   * "applied", "failed", or "unknown" (the request may have been sent). The approve → applied SLO.
   */
  approvalToOutcomeSeconds: Histogram<"outcome">;
}

/**
 * Creates the worker's metrics in a fresh registry (default Node process metrics included, with
 * the `gatehouse_worker_` prefix).
 */
export function createWorkerMetrics(): WorkerMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: "gatehouse_worker_" });
  return {
    registry,
    activitySeconds: new Histogram({
      name: "gatehouse_worker_activity_seconds",
      help: "Latency of lifecycle activities, by activity name and outcome (ok|error)",
      labelNames: ["activity", "outcome"],
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60],
      registers: [registry],
    }),
    workflowSeconds: new Histogram({
      name: "gatehouse_worker_workflow_seconds",
      help: "End-to-end latency of lifecycle workflows (start to last step), by workflow type and outcome",
      labelNames: ["workflow", "outcome"],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300, 3600, 86_400, 604_800],
      registers: [registry],
    }),
    approvalToOutcomeSeconds: new Histogram({
      name: "gatehouse_worker_approval_to_outcome_seconds",
      help: "Seconds from ActionApproved to the apply's outcome being recorded, by outcome (applied|failed|unknown)",
      labelNames: ["outcome"],
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900, 3600],
      registers: [registry],
    }),
  };
}

/**
 * Wraps each async function of `activities` so its latency lands in `activitySeconds`
 * (outcome "error" when it throws; the error is rethrown unchanged).
 */
export function instrumentActivities<T extends object>(activities: T, metrics: WorkerMetrics): T {
  const out: Record<string, unknown> = {};
  for (const [name, fn] of Object.entries(activities)) {
    if (typeof fn !== "function") continue;
    out[name] = async (...args: unknown[]) => {
      const end = metrics.activitySeconds.startTimer({ activity: name });
      try {
        const result = await (fn as (...a: unknown[]) => Promise<unknown>)(...args);
        end({ outcome: "ok" });
        return result;
      } catch (err) {
        end({ outcome: "error" });
        throw err;
      }
    };
  }
  return out as T;
}
