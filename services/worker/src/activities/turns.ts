/**
 * Recording a turn's end: TurnResumed or TurnCompleted (proto/gatehouse/v1/events.proto) appended
 * to the workspace stream at the revision read, unless the turn already ended there (idempotent).
 */
import { evolve, initialState, type WorkspaceState, workspaceStreamId } from "@gatehouse/approval-core";
import { type StoredEvent, WrongExpectedRevision } from "@gatehouse/event-store";
import {
  ActionStatus,
  type TurnActionResult,
  TurnCompleted,
  TurnResumed,
  TurnSuspended,
} from "@gatehouse/proto";
import type { LifecycleActivities, TurnOutcome } from "../workflows/activity-api.ts";
import type { ActivityDeps } from "./deps.ts";

/** Actor of the turn events the worker appends. */
export const WORKER_ACTOR = "service:worker";

const MAX_ATTEMPTS = 8;

function turnIdOf(type: string, data: unknown): string | undefined {
  if (type === "TurnResumed") return TurnResumed.fromJSON(data).turnId;
  if (type === "TurnCompleted") return TurnCompleted.fromJSON(data).turnId;
  return undefined;
}

/** The reason recorded for an awaited action that had no final status when its turn completed. */
export const UNDECIDED_AT_COMPLETION = "not decided when the turn completed";

/**
 * One result per awaited action, in `awaited` order. The workflow's `results` hold the awaited
 * actions whose outcome signal it had when it ended; a turn completes on the first rejection or
 * failure, so the actions that rejection cascaded to (rejected in the same append, their own
 * signals still on the way) and awaited actions nobody decided yet are missing there. Those come
 * from the stream `state`: "rejected"/"failed" with the reason, "applied" with the result,
 * "approved" (not applied yet) or "pending", both with UNDECIDED_AT_COMPLETION as the reason.
 * Results for ids not in `awaited` are kept, after the others.
 */
export function everyAwaitedResult(
  awaited: number[],
  results: TurnActionResult[],
  state: WorkspaceState,
): TurnActionResult[] {
  const known = new Map(results.map((r) => [r.actionId, r]));
  const out = awaited.map((actionId): TurnActionResult => {
    const r = known.get(actionId);
    if (r) return r;
    const a = state.actions.get(actionId);
    switch (a?.status) {
      case ActionStatus.ACTION_STATUS_REJECTED:
        return { actionId, status: "rejected", resultJson: "", reason: a.reason };
      case ActionStatus.ACTION_STATUS_FAILED:
        return { actionId, status: "failed", resultJson: "", reason: a.reason };
      case ActionStatus.ACTION_STATUS_APPLIED:
        return { actionId, status: "applied", resultJson: a.resultJson, reason: "" };
      case ActionStatus.ACTION_STATUS_APPROVED:
      case ActionStatus.ACTION_STATUS_APPLYING:
        return { actionId, status: "approved", resultJson: "", reason: UNDECIDED_AT_COMPLETION };
      default:
        return { actionId, status: "pending", resultJson: "", reason: UNDECIDED_AT_COMPLETION };
    }
  });
  const inAwaited = new Set(awaited);
  return [...out, ...results.filter((r) => !inAwaited.has(r.actionId))];
}

/** The action ids the turn's TurnSuspended names (empty when the stream has none). */
function awaitedOf(events: StoredEvent[], turnId: string): number[] {
  for (const e of events) {
    if (e.type !== "TurnSuspended") continue;
    const s = TurnSuspended.fromJSON(e.data);
    if (s.turnId === turnId) return [...new Set(s.actionIds)].sort((a, b) => a - b);
  }
  return [];
}

function eventOf(o: TurnOutcome, events: StoredEvent[]): { type: string; data: unknown } {
  const given: TurnActionResult[] = o.results.map((r) => ({
    actionId: r.actionId,
    status: r.status,
    resultJson: r.resultJson ?? "",
    reason: r.reason ?? "",
  }));
  const awaited = awaitedOf(events, o.turnId);
  const results = awaited.length
    ? everyAwaitedResult(awaited, given, events.reduce(evolve, initialState()))
    : given;
  return o.state === "resumed"
    ? { type: "TurnResumed", data: TurnResumed.toJSON({ turnId: o.turnId, results }) }
    : { type: "TurnCompleted", data: TurnCompleted.toJSON({ turnId: o.turnId, reason: o.reason, results }) };
}

/** The turn-outcome activity. */
export function turnActivities({
  store,
  logger,
}: ActivityDeps): Pick<LifecycleActivities, "recordTurnOutcome"> {
  return {
    async recordTurnOutcome(outcome: TurnOutcome): Promise<void> {
      const streamId = workspaceStreamId(outcome.workspaceId);
      for (let attempt = 1; ; attempt++) {
        const events = await store.readStream(streamId);
        if (events.some((e) => turnIdOf(e.type, e.data) === outcome.turnId)) return;
        const revision = events.at(-1)?.revision ?? -1;
        try {
          await store.append(
            streamId,
            [{ ...eventOf(outcome, events), metadata: { actor: WORKER_ACTOR } }],
            revision,
          );
          logger.info({
            event: `turn_${outcome.state}`,
            workspaceId: outcome.workspaceId,
            turnId: outcome.turnId,
          });
          return;
        } catch (err) {
          if (!(err instanceof WrongExpectedRevision) || attempt >= MAX_ATTEMPTS) throw err;
        }
      }
    },
  };
}
