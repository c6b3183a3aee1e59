/** Drives lifecycle workflows with a Temporal client, as the approval service does. */
import {
  ACTION_WORKFLOW,
  type ActionWorkflowInput,
  actionWorkflowId,
  DEFAULT_ACTION_TTL_MS,
  type DecisionOutcome,
  LIFECYCLE_TASK_QUEUE,
} from "@gatehouse/approval-core/lifecycle-contract";
import type { Client, WorkflowHandle } from "@temporalio/client";

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
