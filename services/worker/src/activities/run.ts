/**
 * The batch apply of one binding's run (docs/architecture.md "The approval contract"; contract invariants in
 * @gatehouse/approval-core/lifecycle-contract). One activity attempt:
 * (a) ends the binding's claims without an outcome (a previous attempt or run died after claiming:
 *     its requests may have been sent) as "outcome unknown" — never sends them again;
 * (b) checks the gatekeeper accepts connections — if not, nothing is claimed and a RETRYABLE error
 *     is thrown (on the last allowed attempt the run is claimed and recorded "not sent");
 * (c) claims the next run (ClaimRun: ActionApplying for each, one append, expected revision);
 * (d) calls ApplyActions, heartbeating every second, and appends the outcomes in batches (every
 *     OUTCOME_BATCH outcomes or OUTCOME_FLUSH_MS); a lost call is "outcome unknown" for the action
 *     in flight; the actions the gatekeeper never started, and those it started without an outcome
 *     after an ok=false outcome (not performed), get their claims back (ActionClaimReleased).
 */
import {
  type ActionState,
  claimedActions,
  decide,
  GatekeeperCallError,
  type PlannedEvent,
  planRun,
  type WorkspaceState,
} from "@gatehouse/approval-core";
import type { StoredEvent } from "@gatehouse/event-store";
import { ActionStatus, type ApplyActionResponse, type ApplyActionsRequest, Delivery } from "@gatehouse/proto";
import { ApplicationFailure, Context } from "@temporalio/activity";
import type { LifecycleActivities, RunRef, RunReport } from "../workflows/activity-api.ts";
import { APPLY_MAX_ATTEMPTS } from "../workflows/activity-options.ts";
import type { ActivityDeps } from "./deps.ts";
import { asActivityFailure } from "./errors.ts";

/** How often a run heartbeats, in ms. */
const HEARTBEAT_EVERY_MS = 1000;
/** Outcomes appended together at most. */
const OUTCOME_BATCH = 50;
/** Longest an outcome waits before it is appended, in ms. */
const OUTCOME_FLUSH_MS = 100;

const UNKNOWN_SUFFIX =
  "; the request may have been sent, so the outcome is unknown: check the external system before acting again";

/** `message` with the "outcome is unknown" explanation, unless it gives one already. */
function unknownMessage(message: string): string {
  return /outcome is unknown/.test(message) ? message : `${message}${UNKNOWN_SUFFIX}`;
}

/** One recorded outcome of a run. */
type Outcome =
  | { actionId: number; kind: "applied"; resultJson: string }
  | { actionId: number; kind: "failed"; message: string; outcomeUnknown: boolean };

/** Ids of the final actions among `events` (outcomes and rejections), in append order. */
function finalIds(events: StoredEvent[]): number[] {
  return events
    .filter(
      (e) => e.type === "ActionApplied" || e.type === "ActionApplyFailed" || e.type === "ActionRejected",
    )
    .map((e) => (e.data as { actionId: number }).actionId);
}

/** The ids among `ids` someone must hear of: awaited by a turn, or rejected (their gatekeeper drops them). */
function toAnnounce(state: WorkspaceState, ids: number[]): number[] {
  return ids.filter((id) => {
    const a = state.actions.get(id);
    return (
      a !== undefined &&
      (a.description?.delivery === Delivery.DELIVERY_AWAIT ||
        a.status === ActionStatus.ACTION_STATUS_REJECTED)
    );
  });
}

/** Events recording `outcomes` on `s`, skipping actions no longer claimed (recorded already). */
function outcomeEvents(s: WorkspaceState, outcomes: Outcome[]): PlannedEvent[] {
  const out: PlannedEvent[] = [];
  const seen = new Set<number>();
  for (const o of outcomes) {
    if (s.actions.get(o.actionId)?.status !== ActionStatus.ACTION_STATUS_APPLYING) continue;
    const events = decide(
      o.kind === "applied"
        ? { type: "RecordApplied", actionId: o.actionId, resultJson: o.resultJson }
        : {
            type: "RecordApplyFailed",
            actionId: o.actionId,
            message: o.message,
            outcomeUnknown: o.outcomeUnknown,
          },
      s,
    );
    for (const e of events) {
      const id = (e.data as { actionId: number }).actionId;
      if (e.type === "ActionRejected" && seen.has(id)) continue;
      seen.add(id);
      out.push(e);
    }
  }
  return out;
}

/** Observes approve → outcome seconds for each ActionApplied / ActionApplyFailed among `events`. */
function observeApprovalToOutcome(deps: ActivityDeps, events: StoredEvent[], state: WorkspaceState): void {
  for (const e of events) {
    if (e.type !== "ActionApplied" && e.type !== "ActionApplyFailed") continue;
    const data = e.data as { actionId: number; outcomeUnknown?: boolean };
    const approvedAt = Date.parse(state.actions.get(data.actionId)?.decidedAt ?? "");
    const at = Date.parse(e.metadata.occurredAt);
    if (!Number.isFinite(approvedAt) || !Number.isFinite(at)) continue;
    const outcome = e.type === "ActionApplied" ? "applied" : data.outcomeUnknown ? "unknown" : "failed";
    deps.metrics.approvalToOutcomeSeconds.observe({ outcome }, Math.max(0, at - approvedAt) / 1000);
  }
}

/** The run activity. */
export function runActivities(deps: ActivityDeps): Pick<LifecycleActivities, "applyNextRun"> {
  const { streams, applier, logger } = deps;

  async function append(ref: RunRef, fn: (s: WorkspaceState) => PlannedEvent[]) {
    try {
      return await streams.execute(ref.workspaceId, fn, { correlationId: ref.runKey });
    } catch (err) {
      throw asActivityFailure(err);
    }
  }

  return {
    async applyNextRun(ref: RunRef): Promise<RunReport> {
      const ctx = Context.current();
      const { attempt } = ctx.info;
      const claimedBy = `${ref.runKey}/attempt-${attempt}`;
      const announce: number[] = [];

      // (a) Claims without an outcome: their requests may have been sent; never again.
      const stale = await append(ref, (s) =>
        outcomeEvents(
          s,
          claimedActions(s, ref.binding).map((a) => ({
            actionId: a.id,
            kind: "failed",
            message: `the apply claimed by ${a.claimedBy} never reported an outcome (its worker stopped)${UNKNOWN_SUFFIX}`,
            outcomeUnknown: true,
          })),
        ),
      );
      if (stale.events.length > 0) {
        logger.warn({
          event: "apply_claims_unmatched",
          workspaceId: ref.workspaceId,
          count: stale.events.length,
        });
        announce.push(...finalIds(stale.events));
        observeApprovalToOutcome(deps, stale.events, stale.state);
      }
      const binding = stale.state.bindings.get(ref.binding);
      if (!binding) return { claimed: 0, more: false, announce: toAnnounce(stale.state, announce), wake: [] };

      // (b) Reachable? Nothing is claimed while it is not.
      let unreachable: string | undefined;
      if (applier.ready) {
        try {
          await applier.ready(binding.gatekeeper);
        } catch (err) {
          const message =
            err instanceof GatekeeperCallError
              ? err.message
              : `gatekeeper "${binding.gatekeeper}" is not reachable`;
          if (attempt < APPLY_MAX_ATTEMPTS)
            throw ApplicationFailure.retryable(message, "GatekeeperUnreachable");
          unreachable = `${message} after ${attempt} attempts`;
        }
      }

      // (c) The claim: one append.
      const claim = await append(ref, (s) =>
        decide({ type: "ClaimRun", binding: ref.binding, max: ref.runMax, claimedBy }, s),
      );
      announce.push(...finalIds(claim.events));
      const claimedIds = claim.events
        .filter((e) => e.type === "ActionApplying")
        .map((e) => (e.data as { actionId: number }).actionId);
      // Nothing claimed, but dead approved actions cascaded: plan again (what they blocked may be claimable).
      if (claimedIds.length === 0)
        return {
          claimed: 0,
          more: claim.events.length > 0,
          announce: toAnnounce(claim.state, announce),
          wake: [],
        };
      const actions = claimedIds.map((id) => claim.state.actions.get(id) as ActionState);
      // Traced: this apply's span links to each action's submission.
      await deps.linkSubmissions?.(ref.workspaceId, claimedIds);

      const outcomes: Outcome[] = [];
      if (unreachable) {
        for (const a of actions)
          outcomes.push({ actionId: a.id, kind: "failed", message: unreachable, outcomeUnknown: false });
        const done = await append(ref, (s) => outcomeEvents(s, outcomes));
        announce.push(...finalIds(done.events));
        observeApprovalToOutcome(deps, done.events, done.state);
        return { claimed: actions.length, more: true, announce: toAnnounce(done.state, announce), wake: [] };
      }

      // (d) The call, with outcomes appended in batches as they come.
      const inRun = new Set(claimedIds);
      const request: ApplyActionsRequest = {
        workspaceId: ref.workspaceId,
        binding: ref.binding,
        url: binding.url,
        trust: binding.trust,
        actions: actions.map((a) => ({
          actionId: a.id,
          localId: a.localId,
          payloadJson: a.payloadJson,
          dependencyResults: Object.fromEntries(
            a.dependsOn.flatMap((d) => {
              const dep = claim.state.actions.get(d);
              return !inRun.has(d) && dep?.status === ActionStatus.ACTION_STATUS_APPLIED
                ? [[dep.localId, dep.resultJson]]
                : [];
            }),
          ),
        })),
      };
      const started = new Set<number>();
      const heard = new Set<number>();
      let buffer: Outcome[] = [];
      let flushing: Promise<void> = Promise.resolve();
      let timer: NodeJS.Timeout | undefined;
      const applied: number[] = [];
      const flush = () => {
        clearTimeout(timer);
        timer = undefined;
        const batch = buffer;
        buffer = [];
        if (batch.length === 0) return flushing;
        flushing = flushing.then(async () => {
          const done = await append(ref, (s) => outcomeEvents(s, batch));
          announce.push(...finalIds(done.events));
          observeApprovalToOutcome(deps, done.events, done.state);
        });
        return flushing;
      };
      const record = (o: Outcome) => {
        heard.add(o.actionId);
        buffer.push(o);
        if (o.kind === "applied") applied.push(o.actionId);
        if (buffer.length >= OUTCOME_BATCH) void flush().catch(() => undefined);
        else timer ??= setTimeout(() => void flush().catch(() => undefined), OUTCOME_FLUSH_MS);
      };
      // Heartbeat details: how long the action in flight has been running at the gatekeeper, and
      // how many actions of the run it started.
      let gatekeeperRunningMs = 0;
      ctx.heartbeat({ gatekeeperRunningMs, started: 0 });
      const beat = setInterval(
        () => ctx.heartbeat({ gatekeeperRunningMs, started: started.size }),
        HEARTBEAT_EVERY_MS,
      );
      let notSent: number[] = [];
      try {
        const end = await applier.applyRun(binding.gatekeeper, request, {
          onRunning: (id, elapsedMs) => {
            started.add(id);
            gatekeeperRunningMs = elapsedMs;
          },
          onOutcome: (id, response: ApplyActionResponse) => {
            started.add(id);
            record(
              response.ok
                ? { actionId: id, kind: "applied", resultJson: response.resultJson }
                : {
                    actionId: id,
                    kind: "failed",
                    message: response.error || "the gatekeeper reported a failure without a message",
                    outcomeUnknown: false,
                  },
            );
          },
        });
        if (end.lost && !heard.has(end.lost.actionId)) {
          const e = end.lost.error;
          record({
            actionId: end.lost.actionId,
            kind: "failed",
            message: e.stillRunning ? e.message : unknownMessage(e.message),
            outcomeUnknown: true,
          });
        }
        // Not sent, as the run's reader says: never started, or, after an ok=false outcome, started
        // without an outcome (a unit performed in one external call, e.g. git's one push for a run
        // of commits, announces each; gatekeeper.proto: after an ok=false outcome no action of the
        // run without an outcome was performed).
        notSent = end.notSent.filter((id) => !heard.has(id));
        const unsent = new Set(notSent);
        // Started, never answered, not reported lost nor handed back: treated as lost.
        for (const id of claimedIds) {
          if (started.has(id) && !heard.has(id) && !unsent.has(id)) {
            record({
              actionId: id,
              kind: "failed",
              message: `the gatekeeper started action ${id} but never reported its outcome${UNKNOWN_SUFFIX}`,
              outcomeUnknown: true,
            });
          }
        }
      } catch (err) {
        const refused = err instanceof GatekeeperCallError && !err.requestMaybeSent && started.size === 0;
        if (refused) {
          // Nothing was performed: the first action fails with the gatekeeper's words, the rest wait.
          const [first, ...rest] = claimedIds as [number, ...number[]];
          record({ actionId: first, kind: "failed", message: (err as Error).message, outcomeUnknown: false });
          notSent = rest;
        } else {
          for (const id of claimedIds) {
            if (heard.has(id)) continue;
            if (started.has(id)) {
              record({
                actionId: id,
                kind: "failed",
                message: unknownMessage(err instanceof Error ? err.message : "the gatekeeper call failed"),
                outcomeUnknown: true,
              });
            } else notSent.push(id);
          }
        }
      } finally {
        clearInterval(beat);
      }
      await flush();
      if (notSent.length > 0) {
        const released = new Set(notSent);
        await append(ref, (s) =>
          notSent.flatMap((id) => {
            const a = s.actions.get(id);
            if (a?.status !== ActionStatus.ACTION_STATUS_APPLYING || a.claimedBy !== claimedBy) return [];
            return decide(
              {
                type: "ReleaseClaim",
                actionId: id,
                claimedBy,
                reason: "the gatekeeper stopped the run before it",
              },
              s,
            );
          }),
        );
        logger.info({ event: "apply_claims_released", workspaceId: ref.workspaceId, count: released.size });
      }
      const after = await streams.state(ref.workspaceId);
      const appliedSet = new Set(applied);
      const wake = new Set<string>();
      for (const a of after.actions.values()) {
        if (a.binding === ref.binding || a.status !== ActionStatus.ACTION_STATUS_APPROVED) continue;
        if (a.dependsOn.some((d) => appliedSet.has(d))) wake.add(a.binding);
      }
      const more = planRun(after, ref.binding, 1);
      return {
        claimed: claimedIds.length,
        more: more.run.length > 0 || more.dead.length > 0,
        announce: toAnnounce(after, announce),
        wake: [...wake],
      };
    },
  };
}
