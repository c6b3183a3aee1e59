/**
 * Expiry without a workflow per pending action (docs/architecture.md "Temporal's part": action expiry): a
 * sweep every `everyMs` rejects each workspace's pending actions older than the TTL — reason
 * "expired", decided by "system:expiry", with their cascades — in one append per workspace, with
 * expected revision (several approval replicas may sweep: a lost race re-reads and finds them
 * decided). What it rejected is handed to `onExpired` (the binding runs announce it).
 */
import { decide, type WorkspaceState, type WorkspaceStreams } from "@gatehouse/approval-core";
import { ActionStatus } from "@gatehouse/proto";
import type { Logger } from "pino";

/** Options of ExpirySweeper. */
export interface ExpirySweeperOptions {
  streams: WorkspaceStreams;
  /** Pending time-to-live, ms (GATEHOUSE_ACTION_TTL). */
  ttlMs: number;
  /** Sweep period, ms. */
  everyMs: number;
  /** Called with each workspace's rejected ids (roots then cascades) and their bindings. */
  onExpired(workspaceId: string, rejected: Array<{ actionId: number; binding: string }>): Promise<void>;
  /**
   * Called after each sweep with what is still pending across the workspaces it folded: the count, and
   * the age of the oldest in seconds (0 when none). The metrics' backlog gauges.
   */
  onBacklog?(pending: number, oldestSeconds: number): void;
  logger?: Logger | undefined;
}

/** Pending actions of `state`: how many, and the earliest submission time (ms since the epoch, Infinity when none). */
function pendingOf(state: WorkspaceState): { count: number; oldestMs: number } {
  let count = 0;
  let oldestMs = Number.POSITIVE_INFINITY;
  for (const a of state.actions.values()) {
    if (a.status !== ActionStatus.ACTION_STATUS_PENDING) continue;
    count++;
    const at = Date.parse(a.submittedAt);
    if (Number.isFinite(at) && at < oldestMs) oldestMs = at;
  }
  return { count, oldestMs };
}

export class ExpirySweeper {
  private timer: NodeJS.Timeout | undefined;
  private running: Promise<void> | undefined;

  constructor(private readonly options: ExpirySweeperOptions) {}

  /** Starts sweeping (the first sweep after `everyMs`). */
  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      this.running ??= this.sweep()
        .then(() => undefined)
        .catch((err: unknown) =>
          this.options.logger?.warn({ event: "expiry_sweep_failed", err: (err as Error).message }),
        )
        .finally(() => {
          this.running = undefined;
        });
    }, this.options.everyMs);
    this.timer.unref();
  }

  /** Stops sweeping; resolves when a sweep in progress ended. */
  async stop(): Promise<void> {
    clearInterval(this.timer);
    this.timer = undefined;
    await this.running;
  }

  /** One sweep over every workspace. @returns how many actions it rejected (cascades included). */
  async sweep(nowMs = Date.now()): Promise<number> {
    const { streams, ttlMs } = this.options;
    let total = 0;
    const backlog = { count: 0, oldestMs: Number.POSITIVE_INFINITY };
    for (const workspaceId of await streams.workspaceIds()) {
      let events: Awaited<ReturnType<WorkspaceStreams["execute"]>>;
      try {
        events = await streams.execute(workspaceId, (s) => decide({ type: "ExpireDue", ttlMs, nowMs }, s));
      } catch {
        continue; // not a workspace stream this service folds
      }
      const pending = pendingOf(events.state);
      backlog.count += pending.count;
      backlog.oldestMs = Math.min(backlog.oldestMs, pending.oldestMs);
      if (events.events.length === 0) continue;
      const rejected = events.events.map((e) => {
        const actionId = (e.data as { actionId: number }).actionId;
        return { actionId, binding: events.state.actions.get(actionId)?.binding ?? "" };
      });
      total += rejected.length;
      this.options.logger?.info({ event: "actions_expired", workspaceId, count: rejected.length });
      await this.options.onExpired(workspaceId, rejected);
    }
    this.options.onBacklog?.(
      backlog.count,
      backlog.count > 0 ? Math.max(0, (nowMs - backlog.oldestMs) / 1000) : 0,
    );
    return total;
  }
}
