/**
 * The Temporal side of the approval service: it never decides through Temporal (decisions are
 * appended to the stream directly); it only wakes binding-run workflows (signal-with-start, so a
 * wake sent before the workflow exists starts it) and hands them final actions to announce
 * (contract: @gatehouse/approval-core/lifecycle-contract). It also ends the previous engine's
 * per-action workflows at recovery.
 */
import {
  BINDING_RUN_WORKFLOW,
  type BindingRunInput,
  bindingRunAnnounceSignal,
  bindingRunWakeSignal,
  bindingRunWorkflowId,
  LEGACY_ACTION_WORKFLOW,
  LIFECYCLE_TASK_QUEUE,
} from "@gatehouse/approval-core/lifecycle-contract";
import { type Client, isGrpcServiceError } from "@temporalio/client";
import { LifecycleEngineUnavailable } from "./engine-errors.ts";

/** Options of BindingRuns. */
export interface BindingRunsOptions {
  client: Client;
  /** Address shown in errors ("127.0.0.1:7233"). */
  address: string;
  /** Most actions per ApplyActions run (APPLY_RUN_MAX); undefined: the contract's default. */
  runMax?: number | undefined;
  /** Task queue of the lifecycle worker; default LIFECYCLE_TASK_QUEUE. */
  taskQueue?: string | undefined;
}

/** The reason recorded when recovery terminates a workflow of the previous engine. */
export const LEGACY_TERMINATION_REASON =
  "upgrade: per-action lifecycle workflows are replaced by binding runs (bindingRun); its decision is in the workspace stream and its binding's run applies it";

export class BindingRuns {
  constructor(private readonly options: BindingRunsOptions) {}

  /** Wakes (starting when needed) the run of each binding. @throws LifecycleEngineUnavailable. */
  async wake(workspaceId: string, bindings: Iterable<string>): Promise<void> {
    await Promise.all(
      [...new Set(bindings)].map((binding) =>
        this.signal(
          workspaceId,
          binding,
          { signal: bindingRunWakeSignal, signalArgs: [] },
          "wake a binding run",
        ),
      ),
    );
  }

  /**
   * Hands final actions (root first, then its cascade) to `binding`'s run, which tells their
   * awaiting turns and gatekeepers. @throws LifecycleEngineUnavailable.
   */
  async announce(workspaceId: string, binding: string, actionIds: number[]): Promise<void> {
    if (actionIds.length === 0) return;
    await this.signal(
      workspaceId,
      binding,
      { signal: bindingRunAnnounceSignal, signalArgs: [{ actionIds }] },
      "announce decisions",
    );
  }

  /**
   * Terminates every running workflow of the previous engine (`actionLifecycle`, one per action):
   * the upgrade path. Their decisions are in the stream; binding runs carry on from there.
   * @returns how many were terminated. @throws LifecycleEngineUnavailable.
   */
  async terminateLegacy(): Promise<number> {
    let n = 0;
    try {
      const query = `WorkflowType = '${LEGACY_ACTION_WORKFLOW}' AND ExecutionStatus = 'Running'`;
      for await (const w of this.options.client.workflow.list({ query })) {
        await this.options.client.workflow
          .getHandle(w.workflowId, w.runId)
          .terminate(LEGACY_TERMINATION_REASON)
          .catch(() => undefined);
        n++;
      }
    } catch (err) {
      throw this.unavailable(err, "list the previous engine's workflows");
    }
    return n;
  }

  private async signal(
    workspaceId: string,
    binding: string,
    send:
      | { signal: typeof bindingRunWakeSignal; signalArgs: [] }
      | { signal: typeof bindingRunAnnounceSignal; signalArgs: [{ actionIds: number[] }] },
    operation: string,
  ): Promise<void> {
    const input: BindingRunInput = { workspaceId, binding };
    if (this.options.runMax !== undefined) input.runMax = this.options.runMax;
    try {
      await this.options.client.workflow.signalWithStart(BINDING_RUN_WORKFLOW, {
        taskQueue: this.options.taskQueue ?? LIFECYCLE_TASK_QUEUE,
        workflowId: bindingRunWorkflowId(workspaceId, binding),
        args: [input],
        ...(send as { signal: typeof bindingRunWakeSignal; signalArgs: [] }),
      });
    } catch (err) {
      throw this.unavailable(err, operation);
    }
  }

  private unavailable(err: unknown, operation: string): Error {
    if (isGrpcServiceError(err) || (err instanceof Error && err.name === "ServiceError")) {
      return new LifecycleEngineUnavailable(this.options.address, operation);
    }
    return err instanceof Error ? err : new Error(String(err));
  }
}
