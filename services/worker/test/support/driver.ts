/** Drives lifecycle workflows with a Temporal client, as the approval service does. */
import {
  ACTION_WORKFLOW,
  type ActionWorkflowInput,
  actionWorkflowId,
  DEFAULT_ACTION_TTL_MS,
  type DecisionOutcome,
  LIFECYCLE_TASK_QUEUE,
  TURN_WORKFLOW,
  type TurnWorkflowInput,
  turnAwaitingSignal,
  turnWorkflowId,
} from "@gatehouse/approval-core/lifecycle-contract";
import type { Client, WorkflowHandle } from "@temporalio/client";
import type { TurnOutcome } from "../../src/index.ts";

/** Starts (or finds) the action's workflow; a second start is a no-op ("use existing"). */
export function startAction(
  client: Client,
  workspaceId: string,
  actionId: number,
  options: { ttlMs?: number; taskQueue?: string } = {},
): Promise<WorkflowHandle<(input: ActionWorkflowInput) => Promise<DecisionOutcome>>> {
  return client.workflow.start<(input: ActionWorkflowInput) => Promise<DecisionOutcome>>(ACTION_WORKFLOW, {
    workflowId: actionWorkflowId(workspaceId, actionId),
    taskQueue: options.taskQueue ?? LIFECYCLE_TASK_QUEUE,
    args: [{ workspaceId, actionId, ttlMs: options.ttlMs ?? DEFAULT_ACTION_TTL_MS }],
    workflowIdConflictPolicy: "USE_EXISTING",
  });
}

/** A short unique id for a test's workspace. */
export function uniqueId(prefix: string): string {
  return `${prefix}-${Math.random().toString(36).slice(2, 10)}`;
}

/** Tells the turn workflow which actions it awaits, starting it if needed (what the kernel does). */
export function awaitTurn(
  client: Client,
  workspaceId: string,
  turnId: string,
  actionIds: number[],
  taskQueue = LIFECYCLE_TASK_QUEUE,
): Promise<WorkflowHandle<(input: TurnWorkflowInput) => Promise<TurnOutcome>>> {
  return client.workflow.signalWithStart<
    (input: TurnWorkflowInput) => Promise<TurnOutcome>,
    [{ actionIds: number[] }]
  >(TURN_WORKFLOW, {
    workflowId: turnWorkflowId(workspaceId, turnId),
    taskQueue,
    args: [{ workspaceId, turnId }],
    signal: turnAwaitingSignal,
    signalArgs: [{ actionIds }],
  });
}
