/**
 * Recording a turn's end: TurnResumed or TurnCompleted (proto/gatehouse/v1/events.proto) appended
 * to the workspace stream at the revision read, unless the turn already ended there (idempotent).
 */
import { workspaceStreamId } from "@gatehouse/approval-core";
import { WrongExpectedRevision } from "@gatehouse/event-store";
import { type TurnActionResult, TurnCompleted, TurnResumed } from "@gatehouse/proto";
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

function eventOf(o: TurnOutcome): { type: string; data: unknown } {
  const results: TurnActionResult[] = o.results.map((r) => ({
    actionId: r.actionId,
    status: r.status,
    resultJson: r.resultJson ?? "",
    reason: r.reason ?? "",
  }));
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
            [{ ...eventOf(outcome), metadata: { actor: WORKER_ACTOR } }],
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
