/**
 * `TemporalLifecycle`: the ActionLifecycle as a Temporal client. The lifecycle worker
 * (@gatehouse/worker) is the engine — its `actionLifecycle` workflow appends every transition and
 * calls the gatekeeper; this class validates with the domain first (so a refused request appends
 * and sends nothing), delivers decisions to the workflows, drives the auto-approval drain, and
 * answers from the stream projection once the outcome is known.
 */
import {
  ActionNotPending,
  decide,
  KeyedQueue,
  toActionRecord,
  type WorkspaceStreams,
} from "@gatehouse/approval-core";
import type { Decision } from "@gatehouse/approval-core/lifecycle-contract";
import { type ActionRecord, ActionStatus } from "@gatehouse/proto";
import { WorkflowNotFoundError } from "@temporalio/client";
import type { Logger } from "pino";
import type { ActionWorkflows, DecisionDelivery } from "../adapters/action-workflows.ts";
import type { ActionLifecycle, ApproveOptions } from "./action-lifecycle.ts";
import { approvalPlan, bindingsOf, nextAutoApproval, validateReject } from "./drain-planner.ts";
import { type LifecycleMetrics, noMetrics } from "./metrics-hooks.ts";

/** Dependencies of TemporalLifecycle. */
export interface TemporalLifecycleOptions {
  streams: WorkspaceStreams;
  workflows: ActionWorkflows;
  logger?: Logger | undefined;
  metrics?: LifecycleMetrics | undefined;
}

/** Statuses whose action still needs its workflow (not final). */
const OPEN = new Set([
  ActionStatus.ACTION_STATUS_PENDING,
  ActionStatus.ACTION_STATUS_APPROVED,
  ActionStatus.ACTION_STATUS_APPLYING,
]);

export class TemporalLifecycle implements ActionLifecycle {
  /** Serializes the drains of one workspace, so two drains never race for the same action. */
  private readonly drains = new KeyedQueue();
  private readonly inFlight = new Set<Promise<unknown>>();
  private readonly streams: WorkspaceStreams;
  private readonly workflows: ActionWorkflows;
  private readonly logger: Logger | undefined;
  private readonly metrics: LifecycleMetrics;

  constructor(options: TemporalLifecycleOptions) {
    this.streams = options.streams;
    this.workflows = options.workflows;
    this.logger = options.logger;
    this.metrics = options.metrics ?? noMetrics;
  }

  approve(
    workspaceId: string,
    actionIds: number[],
    decidedBy: string,
    options: ApproveOptions = {},
  ): Promise<ActionRecord[]> {
    return this.track(async () => {
      const plan = approvalPlan(
        await this.streams.state(workspaceId),
        actionIds,
        decidedBy,
        options.includeDependencies ?? false,
      );
      const touched = new Set<number>();
      let queueOnly = false; // once no worker accepted an Update, the rest of the batch is queued too
      for (const [i, id] of plan.entries()) {
        touched.add(id);
        // A later member may have been decided meanwhile (e.g. rejected by an earlier member's cascade).
        if (i > 0 && (await this.status(workspaceId, id)) !== ActionStatus.ACTION_STATUS_PENDING) continue;
        const decision: Decision = { kind: "approve", decidedBy };
        let delivery: DecisionDelivery;
        try {
          delivery = queueOnly
            ? await this.workflows
                .queue(workspaceId, id, decision)
                .then(() => ({ delivered: "signal" as const }))
            : await this.deliver(workspaceId, id, decision);
        } catch (err) {
          if (i > 0 && err instanceof ActionNotPending) continue;
          throw err;
        }
        if (delivery.delivered === "signal") queueOnly = true;
        this.note(workspaceId, id, delivery, decidedBy, touched);
      }
      if (!queueOnly) for (const t of await this.drainBindingsOf(workspaceId, plan)) touched.add(t);
      return this.records(workspaceId, touched);
    });
  }

  reject(workspaceId: string, actionId: number, decidedBy: string, reason: string): Promise<ActionRecord[]> {
    return this.track(async () => {
      validateReject(await this.streams.state(workspaceId), actionId, decidedBy, reason);
      const touched = new Set([actionId]);
      const delivery = await this.deliver(workspaceId, actionId, { kind: "reject", decidedBy, reason });
      this.note(workspaceId, actionId, delivery, decidedBy, touched);
      if (delivery.delivered === "update") {
        for (const t of await this.drainBindingsOf(workspaceId, touched)) touched.add(t);
      }
      return this.records(workspaceId, touched);
    });
  }

  afterSubmit(workspaceId: string, actionId: number): Promise<ActionRecord[]> {
    return this.track(async () => {
      if ((await this.status(workspaceId, actionId)) !== ActionStatus.ACTION_STATUS_PENDING) return [];
      try {
        await this.workflows.ensureStarted(workspaceId, actionId);
      } catch (err) {
        // The action is recorded; recover() (next start) or the first decision starts its workflow.
        this.logger?.warn({
          event: "workflow_start_failed",
          workspaceId,
          actionId,
          err: (err as Error).message,
        });
        return [];
      }
      const drained = await this.drainBindingsOf(workspaceId, [actionId]);
      return this.records(workspaceId, new Set(drained));
    });
  }

  setAutoApprovalRule(
    workspaceId: string,
    rule: { binding: string; actionKindTag: string; enabled: boolean; setBy: string },
  ): Promise<ActionRecord[]> {
    return this.track(async () => {
      await this.streams.execute(
        workspaceId,
        (s) => decide({ type: "SetAutoApprovalRule", ...rule }, s),
        rule.setBy.startsWith("user:") ? { caller: { kind: "user", id: rule.setBy.slice(5) } } : {},
      );
      this.logger?.info({
        event: "auto_approval_rule_set",
        workspaceId,
        binding: rule.binding,
        enabled: rule.enabled,
      });
      const drained = rule.enabled ? await this.drainBindingsOf(workspaceId, [], [rule.binding]) : [];
      return this.records(workspaceId, new Set(drained));
    });
  }

  /**
   * Makes sure every non-final action has its workflow (a retried start is a no-op), then drains
   * the bindings with pending actions in the background (`idle()` waits for them).
   * "Outcome unknown" for a claim left by a crash is the worker's apply activity's job.
   * @returns the number of actions whose workflow was ensured.
   */
  async recover(): Promise<number> {
    let ensured = 0;
    for (const workspaceId of await this.streams.workspaceIds()) {
      let open: Array<{ id: number; binding: string; pending: boolean }>;
      try {
        const state = await this.streams.state(workspaceId);
        open = [...state.actions.values()]
          .filter((a) => OPEN.has(a.status))
          .map((a) => ({
            id: a.id,
            binding: a.binding,
            pending: a.status === ActionStatus.ACTION_STATUS_PENDING,
          }));
      } catch {
        continue; // not a workspace stream this service can fold (no WorkspaceCreated)
      }
      for (const a of open) {
        await this.workflows.ensureStarted(workspaceId, a.id);
        ensured++;
      }
      const bindings = [...new Set(open.filter((a) => a.pending).map((a) => a.binding))];
      if (bindings.length > 0) {
        void this.track(() => this.drainBindingsOf(workspaceId, [], bindings)).catch((err: unknown) =>
          this.logger?.warn({ event: "recovery_drain_failed", workspaceId, err: (err as Error).message }),
        );
      }
    }
    this.logger?.info({ event: "workflows_ensured", count: ensured });
    return ensured;
  }

  async idle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.allSettled([...this.inFlight]);
  }

  /** Delivers a decision, starting the workflow first when it does not exist yet. */
  private async deliver(
    workspaceId: string,
    actionId: number,
    decision: Decision,
  ): Promise<DecisionDelivery> {
    const started = performance.now();
    let delivery: DecisionDelivery;
    try {
      delivery = await this.workflows.decide(workspaceId, actionId, decision);
    } catch (err) {
      if (!(err instanceof WorkflowNotFoundError)) throw err;
      await this.workflows.ensureStarted(workspaceId, actionId);
      delivery = await this.workflows.decide(workspaceId, actionId, decision);
    }
    const outcome = delivery.delivered === "update" ? delivery.outcome.status : "queued";
    this.metrics.decisionLatency((performance.now() - started) / 1000, decision.kind, outcome);
    return delivery;
  }

  /** Logs and counts a delivered decision; adds cascaded ids to `touched`. */
  private note(
    workspaceId: string,
    actionId: number,
    delivery: DecisionDelivery,
    decidedBy: string,
    touched: Set<number>,
  ): void {
    if (delivery.delivered === "signal") {
      this.metrics.decision("queued");
      this.logger?.warn({
        event: "decision_queued",
        workspaceId,
        actionId,
        decidedBy,
        detail:
          "no lifecycle worker accepted the decision in time; it is stored and applies once a worker runs",
      });
      return;
    }
    const { outcome } = delivery;
    for (const c of outcome.cascaded) touched.add(c);
    this.metrics.decision(outcome.outcomeUnknown ? "outcome_unknown" : outcome.status);
    if (outcome.cascaded.length > 0) this.metrics.decision("cascaded", outcome.cascaded.length);
    this.logger?.info({
      event: `action_${outcome.status}`,
      workspaceId,
      actionId,
      decidedBy,
      cascaded: outcome.cascaded.length,
    });
  }

  /**
   * Auto-approves, binding by binding, the next action rules may approve until one needs a person
   * (never skipping ahead). Serialized per workspace. @returns the drained (and cascaded) ids.
   */
  private drainBindingsOf(
    workspaceId: string,
    actionIds: Iterable<number>,
    extra: string[] = [],
  ): Promise<number[]> {
    return this.drains.run(workspaceId, async () => {
      const state = await this.streams.state(workspaceId);
      const bindings = new Set([...bindingsOf(state, actionIds), ...extra]);
      const out: number[] = [];
      for (const binding of bindings) out.push(...(await this.drain(workspaceId, binding)));
      return out;
    });
  }

  private async drain(workspaceId: string, binding: string): Promise<number[]> {
    const out: number[] = [];
    for (;;) {
      const next = nextAutoApproval(await this.streams.state(workspaceId), binding);
      if (!next) return out;
      let delivery: DecisionDelivery;
      try {
        delivery = await this.deliver(workspaceId, next.actionId, {
          kind: "approve",
          decidedBy: next.decidedBy,
        });
      } catch (err) {
        // Someone decided it meanwhile: their request drains after its outcome.
        if (err instanceof ActionNotPending) return out;
        throw err;
      }
      const touched = new Set([next.actionId]);
      this.note(workspaceId, next.actionId, delivery, next.decidedBy, touched);
      out.push(...touched);
      // A queued decision leaves the action pending in the stream until a worker runs: stop here.
      if (delivery.delivered === "signal") return out;
      this.metrics.decision("auto_approved");
    }
  }

  private async status(workspaceId: string, actionId: number): Promise<ActionStatus | undefined> {
    return (await this.streams.state(workspaceId)).actions.get(actionId)?.status;
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
