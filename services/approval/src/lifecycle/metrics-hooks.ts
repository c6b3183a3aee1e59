/** What the lifecycle reports for metrics; `src/metrics.ts` implements it with prom-client. */
export interface LifecycleMetrics {
  /**
   * One decision outcome as the approval service saw it: "applied", "failed", "outcome_unknown",
   * "rejected", "cascaded", "auto_approved", "queued" (no worker accepted it in time).
   */
  decision(outcome: string, count?: number): void;
  /**
   * Time from sending a decision to its workflow until its final outcome came back (approve→applied
   * for approvals), in seconds; `outcome` is the final status or "queued".
   */
  decisionLatency(seconds: number, kind: string, outcome: string): void;
  /**
   * The pending backlog as one expiry sweep found it: actions waiting for a decision in every workspace,
   * and the age of the oldest, in seconds (0 when none).
   */
  backlog(count: number, oldestSeconds: number): void;
}

/** Metrics sink that records nothing. */
export const noMetrics: LifecycleMetrics = { decision() {}, decisionLatency() {}, backlog() {} };
