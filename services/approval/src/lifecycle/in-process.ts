/**
 * `InProcessLifecycle`: the ActionLifecycle run inside the approval process. Decisions of one
 * workspace are serialized by a per-workspace queue (the "decision lane"); every append carries an
 * expected revision, so other processes sharing the store are caught by WrongExpectedRevision and
 * the decision is re-read and re-decided (WorkspaceStreams.execute).
 */

import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import {
  ActionNotPending,
  ActionStateConflict,
  type AppendContext,
  decide,
  type GatekeeperApplier,
  GatekeeperCallError,
  KeyedQueue,
  toActionRecord,
  type WorkspaceState,
  type WorkspaceStreams,
} from "@gatehouse/approval-core";
import type { StoredEvent } from "@gatehouse/event-store";
import { type ActionRecord, ActionStatus } from "@gatehouse/proto";
import type { Logger } from "pino";
import type { ActionLifecycle, ApproveOptions } from "./action-lifecycle.ts";
import { type LifecycleMetrics, noMetrics } from "./metrics-hooks.ts";

/** Dependencies of InProcessLifecycle. */
export interface InProcessLifecycleOptions {
  streams: WorkspaceStreams;
  applier: GatekeeperApplier;
  /** Identifies this process in ActionApplying.claimedBy; default `<hostname>/<pid>/<uuid>`. */
  instanceId?: string;
  logger?: Logger | undefined;
  metrics?: LifecycleMetrics | undefined;
}

/** The caller metadata of a decision by "user:<id>"; rules and services have none. */
function callerOfDecider(decidedBy: string): AppendContext {
  const [kind, ...rest] = decidedBy.split(":");
  return kind === "user" ? { caller: { kind: "user", id: rest.join(":") } } : {};
}

export class InProcessLifecycle implements ActionLifecycle {
  readonly instanceId: string;
  private readonly lane = new KeyedQueue();
  private readonly streams: WorkspaceStreams;
  private readonly applier: GatekeeperApplier;
  private readonly logger: Logger | undefined;
  private readonly metrics: LifecycleMetrics;

  constructor(options: InProcessLifecycleOptions) {
    this.streams = options.streams;
    this.applier = options.applier;
    this.instanceId = options.instanceId ?? `${hostname()}/${process.pid}/${randomUUID()}`;
    this.logger = options.logger;
    this.metrics = options.metrics ?? noMetrics;
  }

  approve(
    workspaceId: string,
    actionIds: number[],
    decidedBy: string,
    options: ApproveOptions = {},
  ): Promise<ActionRecord[]> {
    return this.lane.run(workspaceId, async () => {
      const touched = new Set<number>();
      const plan = decide(
        { type: "Approve", actionIds, decidedBy, includeDependencies: options.includeDependencies ?? false },
        await this.streams.state(workspaceId),
      ).map((e) => (e.data as { actionId: number }).actionId);
      for (const [i, id] of plan.entries()) {
        try {
          await this.streams.execute(
            workspaceId,
            (s) => decide({ type: "Approve", actionIds: [id], decidedBy, includeDependencies: false }, s),
            callerOfDecider(decidedBy),
          );
        } catch (err) {
          // A later member of the plan may have been rejected by the cascade of an earlier failed apply.
          if (i > 0 && err instanceof ActionNotPending) {
            touched.add(id);
            continue;
          }
          throw err;
        }
        this.metrics.decision("approved");
        this.log("action_approved", workspaceId, id, { decidedBy });
        for (const t of await this.applyApproved(workspaceId, id)) touched.add(t);
      }
      for (const t of await this.drainBindingsOf(workspaceId, plan)) touched.add(t);
      return this.records(workspaceId, touched);
    });
  }

  reject(workspaceId: string, actionId: number, decidedBy: string, reason: string): Promise<ActionRecord[]> {
    return this.lane.run(workspaceId, async () => {
      const { events } = await this.streams.execute(
        workspaceId,
        (s) => decide({ type: "Reject", actionId, decidedBy, reason }, s),
        callerOfDecider(decidedBy),
      );
      const rejected = rejectedIds(events);
      this.metrics.decision("rejected");
      if (rejected.length > 1) this.metrics.decision("cascaded", rejected.length - 1);
      this.log("action_rejected", workspaceId, actionId, { decidedBy, cascaded: rejected.length - 1 });
      await this.notifyRejected(workspaceId, rejected);
      const touched = new Set(rejected);
      for (const t of await this.drainBindingsOf(workspaceId, rejected)) touched.add(t);
      return this.records(workspaceId, touched);
    });
  }

  afterSubmit(workspaceId: string, actionId: number): Promise<ActionRecord[]> {
    return this.lane.run(workspaceId, async () => {
      const drained = await this.drainBindingsOf(workspaceId, [actionId]);
      return this.records(workspaceId, new Set(drained));
    });
  }

  setAutoApprovalRule(
    workspaceId: string,
    rule: { binding: string; actionKindTag: string; enabled: boolean; setBy: string },
  ): Promise<ActionRecord[]> {
    return this.lane.run(workspaceId, async () => {
      await this.streams.execute(
        workspaceId,
        (s) => decide({ type: "SetAutoApprovalRule", ...rule }, s),
        callerOfDecider(rule.setBy),
      );
      this.logger?.info({
        event: "auto_approval_rule_set",
        workspaceId,
        binding: rule.binding,
        enabled: rule.enabled,
      });
      const drained = rule.enabled ? await this.drain(workspaceId, rule.binding) : [];
      return this.records(workspaceId, new Set(drained));
    });
  }

  async recover(): Promise<number> {
    let unknown = 0;
    for (const workspaceId of await this.streams.workspaceIds()) {
      unknown += await this.lane.run(workspaceId, async () => {
        let count = 0;
        let state: WorkspaceState;
        try {
          state = await this.streams.state(workspaceId);
        } catch {
          return 0; // not a workspace stream this service can fold (no WorkspaceCreated)
        }
        const actions = [...state.actions.values()].map((a) => ({
          id: a.id,
          status: a.status,
          claimedBy: a.claimedBy,
          binding: a.binding,
        }));
        for (const a of actions) {
          if (a.status === ActionStatus.ACTION_STATUS_APPLYING && a.claimedBy !== this.instanceId) {
            await this.recordFailure(
              workspaceId,
              a.id,
              `the apply claimed by ${a.claimedBy} never reported an outcome (that process is gone); the outcome is unknown, check the external system before acting again`,
              true,
            );
            count++;
          } else if (a.status === ActionStatus.ACTION_STATUS_APPROVED) {
            await this.applyApproved(workspaceId, a.id);
          }
        }
        await this.drainBindingsOf(
          workspaceId,
          actions.map((a) => a.id),
        );
        return count;
      });
    }
    if (unknown > 0) this.logger?.warn({ event: "claims_recovered", outcomeUnknown: unknown });
    return unknown;
  }

  idle(): Promise<void> {
    return this.lane.idle();
  }

  /** Claim -> ApplyAction -> outcome (+ cascade). Returns ids touched (the action and cascaded ones). */
  private async applyApproved(workspaceId: string, actionId: number): Promise<number[]> {
    let state: WorkspaceState;
    try {
      ({ state } = await this.streams.execute(workspaceId, (s) =>
        decide({ type: "ClaimApply", actionId, claimedBy: this.instanceId }, s),
      ));
    } catch (err) {
      if (err instanceof ActionStateConflict) {
        this.logger?.warn({ event: "claim_refused", workspaceId, actionId, err: err.message });
        return [actionId];
      }
      throw err;
    }
    const action = state.actions.get(actionId);
    const binding = action ? state.bindings.get(action.binding) : undefined;
    if (!action || !binding) {
      return this.recordFailure(
        workspaceId,
        actionId,
        "the binding of this action was removed; the request was not sent",
        false,
      );
    }
    const request = {
      workspaceId,
      binding: action.binding,
      url: binding.url,
      trust: binding.trust,
      actionId,
      localId: action.localId,
      payloadJson: action.payloadJson,
    };
    const started = process.hrtime.bigint();
    const seconds = () => Number(process.hrtime.bigint() - started) / 1e9;
    let response: { ok: boolean; resultJson: string; error: string };
    try {
      response = await this.applier.apply(binding.gatekeeper, request);
    } catch (err) {
      this.metrics.applyLatency(seconds(), "failed");
      const maybeSent = err instanceof GatekeeperCallError ? err.requestMaybeSent : true;
      const message = err instanceof Error ? err.message : String(err);
      return this.recordFailure(
        workspaceId,
        actionId,
        maybeSent ? `${message}; the request may have been sent, so the outcome is unknown` : message,
        maybeSent,
      );
    }
    if (!response.ok) {
      this.metrics.applyLatency(seconds(), "failed");
      return this.recordFailure(
        workspaceId,
        actionId,
        response.error || "the gatekeeper reported a failure without a message",
        false,
      );
    }
    this.metrics.applyLatency(seconds(), "applied");
    await this.streams.execute(workspaceId, (s) =>
      decide({ type: "RecordApplied", actionId, resultJson: response.resultJson }, s),
    );
    this.metrics.decision("applied");
    this.log("action_applied", workspaceId, actionId);
    return [actionId];
  }

  private async recordFailure(
    workspaceId: string,
    actionId: number,
    message: string,
    outcomeUnknown: boolean,
  ): Promise<number[]> {
    const { events } = await this.streams.execute(workspaceId, (s) =>
      decide({ type: "RecordApplyFailed", actionId, message, outcomeUnknown }, s),
    );
    const cascaded = rejectedIds(events);
    this.metrics.decision(outcomeUnknown ? "outcome_unknown" : "failed");
    if (cascaded.length > 0) this.metrics.decision("cascaded", cascaded.length);
    this.log("action_apply_failed", workspaceId, actionId, { outcomeUnknown, cascaded: cascaded.length });
    await this.notifyRejected(workspaceId, cascaded);
    return [actionId, ...cascaded];
  }

  /** Drains auto-approval for the bindings of `actionIds`. Returns the drained (and cascaded) ids. */
  private async drainBindingsOf(workspaceId: string, actionIds: number[]): Promise<number[]> {
    const state = await this.streams.state(workspaceId);
    const bindings = new Set<string>();
    for (const id of actionIds) {
      const b = state.actions.get(id)?.binding;
      if (b) bindings.add(b);
    }
    const out: number[] = [];
    for (const b of bindings) out.push(...(await this.drain(workspaceId, b)));
    return out;
  }

  /** Auto-approves the binding's pending actions in submission order until one needs a person. */
  private async drain(workspaceId: string, binding: string): Promise<number[]> {
    const out: number[] = [];
    for (;;) {
      const { events } = await this.streams.execute(workspaceId, (s) =>
        decide({ type: "AutoApproveNext", binding }, s),
      );
      const first = events[0];
      if (!first) return out;
      const id = (first.data as { actionId: number }).actionId;
      this.metrics.decision("auto_approved");
      this.log("action_auto_approved", workspaceId, id, { decidedBy: first.metadata.actor });
      out.push(...(await this.applyApproved(workspaceId, id)));
    }
  }

  /** Best-effort ActionRejected notices; failures are logged, never thrown. */
  private async notifyRejected(workspaceId: string, ids: number[]): Promise<void> {
    if (ids.length === 0) return;
    const state = await this.streams.state(workspaceId);
    const notices = ids.flatMap((id) => {
      const a = state.actions.get(id);
      const b = a ? state.bindings.get(a.binding) : undefined;
      return a && b
        ? [
            {
              gatekeeper: b.gatekeeper,
              req: { workspaceId, binding: a.binding, actionId: id, localId: a.localId },
            },
          ]
        : [];
    });
    await Promise.all(
      notices.map(({ gatekeeper, req }) =>
        this.applier.notifyRejected(gatekeeper, req).catch((err: unknown) => {
          this.logger?.warn({
            event: "reject_notice_failed",
            workspaceId,
            actionId: req.actionId,
            err: err instanceof GatekeeperCallError ? "gatekeeper unreachable or refused" : "error",
          });
        }),
      ),
    );
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

  private log(
    event: string,
    workspaceId: string,
    actionId: number,
    extra: Record<string, unknown> = {},
  ): void {
    this.logger?.info({ event, workspaceId, actionId, ...extra });
  }
}

function rejectedIds(events: StoredEvent[]): number[] {
  return events
    .filter((e) => e.type === "ActionRejected")
    .map((e) => (e.data as { actionId: number }).actionId);
}
