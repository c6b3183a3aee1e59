/**
 * Await-decision turns, kernel side (docs/architecture.md "The approval contract"): after an execution, the `await`
 * actions it submitted suspend the turn. The kernel appends TurnSuspended {turnId = executionId,
 * actionIds} and signals-with-start the turn workflow (`awaitDecisionTurn`), which resumes or
 * completes the turn once every awaited action is decided. Action workflows signal the same turn
 * workflow with signal-with-start too, so decisions that arrive first are not lost.
 */
import {
  LIFECYCLE_TASK_QUEUE,
  TURN_WORKFLOW,
  turnAwaitingSignal,
  turnWorkflowId,
} from "@gatehouse/approval-core/lifecycle-contract";
import type { EventStore } from "@gatehouse/event-store";
import { TurnSuspended } from "@gatehouse/proto";
import type { Client } from "@temporalio/client";
import { streamOf } from "./domain/workspace.ts";

/**
 * Suspends the turn `executionId` on `actionIds`: appends TurnSuspended, then signals-with-start
 * the turn workflow. Returns the turn id.
 * @throws the Temporal client's error when the server cannot be reached (the event is already
 *   appended; the turn workflow is started again idempotently by the next attempt).
 */
export async function suspendTurn(
  store: EventStore,
  temporal: Client,
  workspaceId: string,
  executionId: string,
  actionIds: number[],
  actor: string,
): Promise<string> {
  await store.append(
    streamOf(workspaceId),
    [
      {
        type: "TurnSuspended",
        data: TurnSuspended.toJSON({ turnId: executionId, actionIds }),
        metadata: { actor },
      },
    ],
    "any",
  );
  await temporal.workflow.signalWithStart(TURN_WORKFLOW, {
    workflowId: turnWorkflowId(workspaceId, executionId),
    taskQueue: LIFECYCLE_TASK_QUEUE,
    args: [{ workspaceId, turnId: executionId }],
    signal: turnAwaitingSignal,
    signalArgs: [{ actionIds }],
  });
  return executionId;
}
