/**
 * The await-decision turn workflow (id `turnWorkflowId(workspaceId, turnId)`): collects the set of
 * awaited actions (from the kernel) and their final statuses (from the binding runs, many to a
 * signal), in any order — both arrive by signal-with-start, so nothing sent before the workflow exists is lost —
 * then records TurnResumed or TurnCompleted in the workspace stream.
 */
import {
  TURN_WORKFLOW,
  type TurnWorkflowInput,
  turnActionDecidedSignal,
  turnActionsDecidedSignal,
  turnAwaitingSignal,
} from "@gatehouse/approval-core/lifecycle-contract";
import { condition, proxyLocalActivities, setHandler, workflowInfo } from "@temporalio/workflow";
import type {
  LifecycleActivities,
  LifecycleLocalActivities,
  TurnOutcome,
  TurnResult,
} from "./activity-api.ts";
import { METRICS_LOCAL_ACTIVITY, STREAM_LOCAL_ACTIVITY } from "./activity-options.ts";
import { type TurnEnd, turnEnd } from "./turn.ts";

const stream = proxyLocalActivities<LifecycleActivities>(STREAM_LOCAL_ACTIVITY);
const local = proxyLocalActivities<LifecycleLocalActivities>(METRICS_LOCAL_ACTIVITY);

/** Workflow `awaitDecisionTurn`. @returns the outcome it recorded. */
export async function awaitDecisionTurn(input: TurnWorkflowInput): Promise<TurnOutcome> {
  const startedAtMs = workflowInfo().startTime.getTime();
  let awaited: number[] | undefined;
  const decided = new Map<number, TurnResult>();
  setHandler(turnAwaitingSignal, ({ actionIds }) => {
    awaited ??= [...new Set(actionIds)].sort((a, b) => a - b);
  });
  const decide = (r: TurnResult) => {
    if (!decided.has(r.actionId)) decided.set(r.actionId, { ...r });
  };
  setHandler(turnActionDecidedSignal, decide);
  setHandler(turnActionsDecidedSignal, ({ decisions }) => {
    for (const r of decisions) decide(r);
  });

  let end: TurnEnd | undefined;
  await condition(() => {
    end = awaited ? turnEnd(awaited, decided) : undefined;
    return end !== undefined;
  });
  const e = end as TurnEnd;
  const outcome: TurnOutcome = {
    workspaceId: input.workspaceId,
    turnId: input.turnId,
    state: e.state,
    reason: e.reason,
    results: e.results,
  };
  await stream.recordTurnOutcome(outcome);
  await local.observeWorkflowEnd({ workflow: TURN_WORKFLOW, outcome: e.state, startedAtMs });
  return outcome;
}
