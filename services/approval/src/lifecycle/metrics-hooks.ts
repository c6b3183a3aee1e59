/** What the lifecycle reports for metrics; `src/metrics.ts` implements it with prom-client. */
export interface LifecycleMetrics {
  /** One decision outcome: "approved", "auto_approved", "rejected", "cascaded", "applied", "failed", "outcome_unknown". */
  decision(outcome: string, count?: number): void;
  /** Duration of one gatekeeper ApplyAction call, in seconds, by outcome ("applied" | "failed"). */
  applyLatency(seconds: number, outcome: string): void;
}

/** Metrics sink that records nothing. */
export const noMetrics: LifecycleMetrics = { decision() {}, applyLatency() {} };
