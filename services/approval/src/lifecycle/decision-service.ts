/**
 * `DecisionService`: the approval service's ActionLifecycle. It appends the decisions (approve,
 * reject with its cascade, withdraw, expiry) directly and leaves the applies to the lifecycle
 * worker's binding runs (contract: @gatehouse/approval-core/lifecycle-contract).
 * Approve appends every ActionApproved of its plan in one append (expected revision; a conflict
 * re-reads and re-plans), wakes the touched bindings' runs and, unless asked not to, watches the
 * stream for the outcomes. Reject appends the rejection and its cascade and hands them to the
 * worker to announce. Nothing per action lives in Temporal; expiry is a sweep (expiry.ts).
 */
import { decide, KeyedQueue, toActionRecord, type WorkspaceStreams } from "@gatehouse/approval-core";
import { type ActionRecord, ActionStatus } from "@gatehouse/proto";
import { currentTraceparent } from "@gatehouse/telemetry";
import type { Logger } from "pino";
import type { BindingRuns } from "../adapters/binding-runs.ts";
import type { ActionLifecycle, ApproveOptions } from "./action-lifecycle.ts";
import { nextAutoApproval } from "./drain-planner.ts";
import { ExpirySweeper } from "./expiry.ts";
import { type LifecycleMetrics, noMetrics } from "./metrics-hooks.ts";
import { waitForOutcomes } from "./outcome-watch.ts";

/** Dependencies of DecisionService. */
export interface DecisionServiceOptions {
  streams: WorkspaceStreams;
  runs: BindingRuns;
  /** Pending time-to-live, ms. */
  ttlMs: number;
  /** Expiry sweep period, ms (default: a tenth of the TTL, between 100 ms and 60 s). */
  sweepEveryMs?: number | undefined;
  /** Approve stops waiting once its actions made no progress for this long, ms (default 5000). */
  quietMs?: number | undefined;
  /** Longest an Approve waits for outcomes without a request deadline, ms (default 60 s). */
  maxWaitMs?: number | undefined;
  logger?: Logger | undefined;
  metrics?: LifecycleMetrics | undefined;
}

const OPEN_APPLY = new Set([ActionStatus.ACTION_STATUS_APPROVED, ActionStatus.ACTION_STATUS_APPLYING]);

/** The metadata of a decision's events: the deciding person, and the trace context when traced. */
function contextOf(decidedBy: string) {
  const traceparent = currentTraceparent();
  return {
    ...(decidedBy.startsWith("user:") ? { caller: { kind: "user", id: decidedBy.slice(5) } } : {}),
    ...(traceparent ? { traceparent } : {}),
  };
}

/**
 * Decides actions: approve (Approve, ApproveBatch), reject, withdraw, the auto-approval rule and its
 * drain after a submit append their events to the workspace stream; it calls no gatekeeper and holds
 * no Temporal code (the worker's binding runs apply what it approved).
 */
export class DecisionService implements ActionLifecycle {
  /** Serializes the drains of one workspace, so two drains never race for the same action. */
  private readonly drains = new KeyedQueue();
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly streams: WorkspaceStreams;
  private readonly runs: BindingRuns;
  private readonly logger: Logger | undefined;
  private readonly metrics: LifecycleMetrics;
  private readonly quietMs: number;
  private readonly maxWaitMs: number;
  readonly expiry: ExpirySweeper;

  constructor(options: DecisionServiceOptions) {
    this.streams = options.streams;
    this.runs = options.runs;
    this.logger = options.logger;
    this.metrics = options.metrics ?? noMetrics;
    this.quietMs = options.quietMs ?? 5000;
    this.maxWaitMs = options.maxWaitMs ?? 60_000;
    this.expiry = new ExpirySweeper({
      streams: this.streams,
      ttlMs: options.ttlMs,
      everyMs: options.sweepEveryMs ?? Math.min(60_000, Math.max(100, Math.floor(options.ttlMs / 10))),
      logger: this.logger,
      onExpired: (ws, rejected) => this.announce(ws, rejected),
      onBacklog: (count, oldestSeconds) => this.metrics.backlog(count, oldestSeconds),
    });
  }

  approve(
    workspaceId: string,
    actionIds: number[],
    decidedBy: string,
    options: ApproveOptions = {},
  ): Promise<ActionRecord[]> {
    return this.track(async () => {
      const started = performance.now();
      const { events, state } = await this.streams.execute(
        workspaceId,
        (s) =>
          decide(
            {
              type: "Approve",
              actionIds,
              decidedBy,
              includeDependencies: options.includeDependencies ?? false,
              descriptionDigests: options.descriptionDigests,
            },
            s,
          ),
        contextOf(decidedBy),
      );
      const approved = events.map((e) => (e.data as { actionId: number }).actionId);
      const since = (events[0]?.revision ?? state.revision + 1) - 1;
      const bindings = new Set(approved.map((id) => state.actions.get(id)?.binding ?? ""));
      this.metrics.decision("approved", approved.length);
      this.logger?.info({ event: "actions_approved", workspaceId, decidedBy, count: approved.length });
      await this.wake(workspaceId, bindings);
      const touched = new Set(approved);
      if (!options.returnOnceRecorded) {
        await waitForOutcomes(this.streams.store, workspaceId, since, approved, {
          deadlineMs: Math.min(options.deadlineMs ?? Number.POSITIVE_INFINITY, Date.now() + this.maxWaitMs),
          quietMs: this.quietMs,
        });
        const after = await this.streams.state(workspaceId);
        for (const id of approved) {
          const a = after.actions.get(id);
          if (!a) continue;
          const status = OPEN_APPLY.has(a.status) ? "queued" : ActionStatus[a.status];
          this.metrics.decisionLatency((performance.now() - started) / 1000, "approve", status);
        }
        for (const c of cascadedOf(after, approved)) touched.add(c);
      }
      for (const t of await this.drainAndWait(workspaceId, bindings, options)) touched.add(t);
      return this.records(workspaceId, touched);
    });
  }

  reject(workspaceId: string, actionId: number, decidedBy: string, reason: string): Promise<ActionRecord[]> {
    return this.track(async () => {
      const { events, state } = await this.streams.execute(
        workspaceId,
        (s) => decide({ type: "Reject", actionId, decidedBy, reason }, s),
        contextOf(decidedBy),
      );
      const rejected = events.map((e) => {
        const id = (e.data as { actionId: number }).actionId;
        return { actionId: id, binding: state.actions.get(id)?.binding ?? "" };
      });
      this.metrics.decision("rejected");
      if (rejected.length > 1) this.metrics.decision("cascaded", rejected.length - 1);
      this.logger?.info({
        event: "action_rejected",
        workspaceId,
        actionId,
        decidedBy,
        cascaded: rejected.length - 1,
      });
      await this.announce(workspaceId, rejected);
      const touched = new Set(rejected.map((r) => r.actionId));
      for (const t of await this.drainAndWait(workspaceId, new Set(rejected.map((r) => r.binding))))
        touched.add(t);
      return this.records(workspaceId, touched);
    });
  }

  withdraw(
    workspaceId: string,
    actionIds: number[],
    withdrawnBy: string,
    reason: string,
  ): Promise<ActionRecord[]> {
    return this.track(async () => {
      const { events } = await this.streams.execute(
        workspaceId,
        (s) => decide({ type: "WithdrawApproval", actionIds, withdrawnBy, reason }, s),
        contextOf(withdrawnBy),
      );
      const withdrawn = events.map((e) => (e.data as { actionId: number }).actionId);
      this.metrics.decision("withdrawn", withdrawn.length);
      this.logger?.info({ event: "approvals_withdrawn", workspaceId, withdrawnBy, count: withdrawn.length });
      return this.records(workspaceId, new Set(withdrawn));
    });
  }

  afterSubmit(workspaceId: string, actionId: number): Promise<ActionRecord[]> {
    // Not awaited by SubmitAction: the drain reads the stream, so repeating it is harmless.
    void this.track(async () => {
      const binding = (await this.streams.state(workspaceId)).actions.get(actionId)?.binding;
      if (binding) await this.drainBindings(workspaceId, new Set([binding]));
    }).catch((err: unknown) =>
      this.logger?.warn({ event: "drain_failed", workspaceId, err: (err as Error).message }),
    );
    return Promise.resolve([]);
  }

  setAutoApprovalRule(
    workspaceId: string,
    rule: { binding: string; actionKindTag: string; enabled: boolean; setBy: string },
  ): Promise<ActionRecord[]> {
    return this.track(async () => {
      await this.streams.execute(
        workspaceId,
        (s) => decide({ type: "SetAutoApprovalRule", ...rule }, s),
        contextOf(rule.setBy),
      );
      this.logger?.info({
        event: "auto_approval_rule_set",
        workspaceId,
        binding: rule.binding,
        enabled: rule.enabled,
      });
      const drained = rule.enabled ? await this.drainAndWait(workspaceId, new Set([rule.binding])) : [];
      return this.records(workspaceId, new Set(drained));
    });
  }

  /**
   * Start-up recovery: ends the previous engine's per-action workflows (the upgrade path), wakes
   * the run of every binding with approved or applying actions (a claim left by a crash is the
   * run's to settle: "outcome unknown"), drains pending auto-approvable actions in the background,
   * and starts the expiry sweep. @returns the number of bindings woken.
   */
  async recover(): Promise<number> {
    try {
      const terminated = await this.runs.terminateLegacy();
      if (terminated > 0) this.logger?.warn({ event: "legacy_workflows_terminated", count: terminated });
    } catch (err) {
      // Visibility may be unavailable; the old workflows then end on their own (their appends are refused).
      this.logger?.warn({ event: "legacy_workflows_not_listed", err: (err as Error).message });
    }
    let woken = 0;
    for (const workspaceId of await this.streams.workspaceIds()) {
      let applying: Set<string>;
      let pending: Set<string>;
      try {
        const state = await this.streams.state(workspaceId);
        applying = new Set();
        pending = new Set();
        for (const a of state.actions.values()) {
          if (OPEN_APPLY.has(a.status)) applying.add(a.binding);
          if (a.status === ActionStatus.ACTION_STATUS_PENDING) pending.add(a.binding);
        }
      } catch {
        continue; // not a workspace stream this service can fold (no WorkspaceCreated)
      }
      if (applying.size > 0) {
        await this.runs.wake(workspaceId, applying);
        woken += applying.size;
      }
      if (pending.size > 0) {
        void this.track(() => this.drainBindings(workspaceId, pending)).catch((err: unknown) =>
          this.logger?.warn({ event: "recovery_drain_failed", workspaceId, err: (err as Error).message }),
        );
      }
    }
    this.expiry.start();
    this.logger?.info({ event: "binding_runs_woken", count: woken });
    return woken;
  }

  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Stops the expiry sweep. */
  async close(): Promise<void> {
    await this.expiry.stop();
  }

  /** Wakes binding runs; a failure leaves the decisions recorded (recovery or the next wake runs them). */
  private async wake(workspaceId: string, bindings: Set<string>): Promise<void> {
    try {
      await this.runs.wake(workspaceId, [...bindings].filter(Boolean));
    } catch (err) {
      this.metrics.decision("queued");
      this.logger?.warn({
        event: "decision_queued",
        workspaceId,
        err: (err as Error).message,
        detail:
          "the decision is recorded; it applies once the lifecycle engine is reachable (next start at the latest)",
      });
    }
  }

  /** Hands final actions to the worker (turns, gatekeeper notices), each root's binding run. */
  private async announce(
    workspaceId: string,
    rejected: Array<{ actionId: number; binding: string }>,
  ): Promise<void> {
    const first = rejected[0];
    if (!first) return;
    try {
      await this.runs.announce(
        workspaceId,
        first.binding,
        rejected.map((r) => r.actionId),
      );
    } catch (err) {
      this.logger?.warn({ event: "announce_failed", workspaceId, err: (err as Error).message });
    }
  }

  /**
   * Drains `bindings` and, unless `returnOnceRecorded`, waits for the drained actions' outcomes
   * (as an approval does). @returns the drained ids.
   */
  private async drainAndWait(
    workspaceId: string,
    bindings: Set<string>,
    options: ApproveOptions = {},
  ): Promise<number[]> {
    const since = (await this.streams.state(workspaceId)).revision;
    const drained = await this.drainBindings(workspaceId, bindings);
    if (drained.length > 0 && !options.returnOnceRecorded) {
      await waitForOutcomes(this.streams.store, workspaceId, since, drained, {
        deadlineMs: Math.min(options.deadlineMs ?? Number.POSITIVE_INFINITY, Date.now() + this.maxWaitMs),
        quietMs: this.quietMs,
      });
    }
    return drained;
  }

  /**
   * Auto-approves, binding by binding, the next action rules may approve until one needs a person
   * (never skipping ahead), each one append; then wakes the bindings' runs. Serialized per
   * workspace. @returns the drained ids.
   */
  private drainBindings(workspaceId: string, bindings: Set<string>): Promise<number[]> {
    return this.drains.run(workspaceId, async () => {
      const out: number[] = [];
      const woke = new Set<string>();
      for (const binding of bindings) {
        for (;;) {
          const next = nextAutoApproval(await this.streams.state(workspaceId), binding);
          if (!next) break;
          const { events } = await this.streams.execute(workspaceId, (s) =>
            decide({ type: "AutoApproveNext", binding }, s),
          );
          if (events.length === 0) break;
          for (const e of events) out.push((e.data as { actionId: number }).actionId);
          woke.add(binding);
          this.metrics.decision("auto_approved", events.length);
        }
      }
      if (woke.size > 0) await this.wake(workspaceId, woke);
      return out;
    });
  }

  private async records(workspaceId: string, ids: Set<number>): Promise<ActionRecord[]> {
    const state = await this.streams.state(workspaceId);
    return [...ids]
      .sort((x, y) => x - y)
      .flatMap((id) => {
        const a = state.actions.get(id);
        return a ? [toActionRecord(state, a)] : [];
      });
  }

  private track<T>(task: () => Promise<T>): Promise<T> {
    const p = task();
    this.inFlight.add(p);
    void p.then(
      () => this.inFlight.delete(p),
      () => this.inFlight.delete(p),
    );
    return p;
  }
}

/** Actions rejected (transitively) because one of `ids` failed, in id order. */
function cascadedOf(state: import("@gatehouse/approval-core").WorkspaceState, ids: number[]): number[] {
  const dead = new Set(ids);
  const out: number[] = [];
  for (const a of state.actions.values()) {
    if (a.status === ActionStatus.ACTION_STATUS_REJECTED && a.cascadedFrom && dead.has(a.cascadedFrom)) {
      dead.add(a.id);
      out.push(a.id);
    }
  }
  return out;
}
