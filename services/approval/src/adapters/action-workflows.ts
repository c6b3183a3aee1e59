/**
 * The Temporal side of the approval service: one `actionLifecycle` workflow per action (contract:
 * @gatehouse/approval-core/lifecycle-contract). Starts workflows idempotently and delivers
 * decisions — as an Update that returns the final outcome when a worker is polling, or as a
 * durable signal when none accepts the Update in time (the worker decides it once it runs).
 */
import {
  ACTION_WORKFLOW,
  type ActionWorkflowInput,
  actionWorkflowId,
  type Decision,
  type DecisionOutcome,
  decideSignal,
  decideUpdate,
  LIFECYCLE_TASK_QUEUE,
} from "@gatehouse/approval-core/lifecycle-contract";
import {
  ApplicationFailure,
  type Client,
  isGrpcServiceError,
  WorkflowExecutionAlreadyStartedError,
  WorkflowNotFoundError,
  WorkflowUpdateFailedError,
  type WorkflowUpdateHandle,
  WorkflowUpdateRPCTimeoutOrCancelledError,
  WorkflowUpdateStage,
} from "@temporalio/client";
import { ActionLifecycleFailed, LifecycleEngineUnavailable } from "./engine-errors.ts";
import { refusalOf } from "./refusal.ts";

/** How a decision reached the action's workflow. */
export type DecisionDelivery =
  /** A worker accepted the Update and the action reached a final status. */
  | { delivered: "update"; outcome: DecisionOutcome }
  /** No worker accepted the Update in time: the decision was stored as a signal and applies once a worker runs. */
  | { delivered: "signal" };

/** Options of ActionWorkflows. */
export interface ActionWorkflowsOptions {
  client: Client;
  /** Address shown in errors ("127.0.0.1:7233"). */
  address: string;
  /** Pending time-to-live given to new workflows, in ms. */
  ttlMs: number;
  /** How long an Update may wait to be accepted by a worker before the signal is sent instead (ms). */
  acceptTimeoutMs: number;
}

export class ActionWorkflows {
  constructor(private readonly options: ActionWorkflowsOptions) {}

  /**
   * Starts the action's workflow unless it exists (conflict policy USE_EXISTING; a completed one is
   * never started again, a failed or terminated one is). @throws LifecycleEngineUnavailable.
   */
  async ensureStarted(workspaceId: string, actionId: number): Promise<void> {
    try {
      await this.options.client.workflow.start(ACTION_WORKFLOW, this.startOptions(workspaceId, actionId));
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) return;
      throw this.unavailable(err, "start the workflow of an action");
    }
  }

  /**
   * Delivers a decision. The Update's validator refuses a second decision: that becomes
   * ActionNotPending with the workflow's words (ABORTED for an approval that lost a race).
   * @throws ActionNotPending, WorkflowNotFoundError (no workflow: call ensureStarted and retry),
   *   ActionLifecycleFailed (the workflow ended without an outcome), LifecycleEngineUnavailable.
   */
  async decide(workspaceId: string, actionId: number, decision: Decision): Promise<DecisionDelivery> {
    const { client } = this.options;
    const handle = client.workflow.getHandle(actionWorkflowId(workspaceId, actionId));
    let update: WorkflowUpdateHandle<DecisionOutcome>;
    try {
      update = await client.withDeadline(Date.now() + this.options.acceptTimeoutMs, () =>
        handle.startUpdate(decideUpdate, { args: [decision], waitForStage: WorkflowUpdateStage.ACCEPTED }),
      );
    } catch (err) {
      // Refused by the validator (already decided, malformed).
      if (err instanceof WorkflowUpdateFailedError) throw refusalOf(actionId, decision, causeMessage(err));
      if (err instanceof WorkflowNotFoundError) throw err;
      if (err instanceof WorkflowUpdateRPCTimeoutOrCancelledError) {
        await this.queue(workspaceId, actionId, decision);
        return { delivered: "signal" };
      }
      throw this.unavailable(err, "deliver a decision");
    }
    try {
      return { delivered: "update", outcome: await update.result() };
    } catch (err) {
      if (err instanceof WorkflowUpdateFailedError) {
        // Accepted, then refused because another decision was taken first.
        if (isDecisionRefused(err)) {
          throw refusalOf(actionId, decision, causeMessage(err));
        }
        throw new ActionLifecycleFailed(actionId, causeMessage(err));
      }
      throw this.unavailable(err, "wait for the outcome of a decision");
    }
  }

  /** Stores a decision as a signal (starting the workflow if needed); it applies once a worker runs. */
  async queue(workspaceId: string, actionId: number, decision: Decision): Promise<void> {
    try {
      await this.options.client.workflow.signalWithStart(ACTION_WORKFLOW, {
        ...this.startOptions(workspaceId, actionId),
        signal: decideSignal,
        signalArgs: [decision],
      });
    } catch (err) {
      throw this.unavailable(err, "store a decision");
    }
  }

  private startOptions(workspaceId: string, actionId: number) {
    const input: ActionWorkflowInput = { workspaceId, actionId, ttlMs: this.options.ttlMs };
    return {
      taskQueue: LIFECYCLE_TASK_QUEUE,
      workflowId: actionWorkflowId(workspaceId, actionId),
      args: [input],
      workflowIdConflictPolicy: "USE_EXISTING" as const,
      workflowIdReusePolicy: "ALLOW_DUPLICATE_FAILED_ONLY" as const,
    };
  }

  private unavailable(err: unknown, operation: string): Error {
    if (isGrpcServiceError(err) || (err instanceof Error && err.name === "ServiceError")) {
      return new LifecycleEngineUnavailable(this.options.address, operation);
    }
    return err instanceof Error ? err : new Error(String(err));
  }
}

/** The workflow's own words: the failure cause's message, else the error's. */
/**
 * Whether an accepted Update failed because another decision won (the workflow's "DecisionRefused"
 * failure anywhere in the cause chain, or its contract wording "action N was already <decided> by <who>"):
 * a lost race, not a lifecycle failure.
 */
function isDecisionRefused(err: WorkflowUpdateFailedError): boolean {
  for (let e: unknown = err.cause; e instanceof Error; e = e.cause) {
    if (e instanceof ApplicationFailure && e.type === "DecisionRefused") return true;
  }
  return /^action \d+ was already (approved|rejected|applied|decided)\b/.test(causeMessage(err));
}

function causeMessage(err: WorkflowUpdateFailedError): string {
  return err.cause?.message ?? err.message;
}
