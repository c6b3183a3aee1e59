/**
 * Announcing final actions (contract: lifecycle-contract.ts): each awaited action's turn is told
 * (signal-with-start), in the order given — a root before the rejections it cascaded, so the turn
 * names the person's reason — then the gatekeepers hear of the rejected ones (best effort, so they
 * drop them from their overlays). Also the wake of other bindings' runs.
 */
import { type ActionState, GatekeeperCallError } from "@gatehouse/approval-core";
import {
  BINDING_RUN_WORKFLOW,
  type BindingRunInput,
  bindingRunWakeSignal,
  bindingRunWorkflowId,
  type FinalStatus,
  TURN_WORKFLOW,
  turnActionDecidedSignal,
  turnWorkflowId,
} from "@gatehouse/approval-core/lifecycle-contract";
import { ActionStatus, Delivery } from "@gatehouse/proto";
import { WorkflowExecutionAlreadyStartedError } from "@temporalio/client";
import type { LifecycleActivities, TurnResult } from "../workflows/activity-api.ts";
import type { ActivityDeps } from "./deps.ts";

const FINAL: Partial<Record<ActionStatus, FinalStatus>> = {
  [ActionStatus.ACTION_STATUS_APPLIED]: "applied",
  [ActionStatus.ACTION_STATUS_FAILED]: "failed",
  [ActionStatus.ACTION_STATUS_REJECTED]: "rejected",
};

/** The turn result of a final action, or undefined while it is not final. */
export function turnResultOf(a: ActionState): TurnResult | undefined {
  const status = FINAL[a.status];
  if (!status) return undefined;
  return {
    actionId: a.id,
    status,
    ...(a.reason ? { reason: a.reason } : {}),
    ...(a.resultJson ? { resultJson: a.resultJson } : {}),
  };
}

/** The announcement and wake activities. */
export function noticeActivities(deps: ActivityDeps): Pick<LifecycleActivities, "announce" | "wakeBindings"> {
  const { streams, applier, client, taskQueue, logger } = deps;

  async function signalTurn(workspaceId: string, turnId: string, result: TurnResult): Promise<void> {
    try {
      await client.workflow.signalWithStart(TURN_WORKFLOW, {
        workflowId: turnWorkflowId(workspaceId, turnId),
        taskQueue,
        args: [{ workspaceId, turnId }],
        signal: turnActionDecidedSignal,
        signalArgs: [result],
        // A turn that already ended must not be started again by a late decision.
        workflowIdReusePolicy: "REJECT_DUPLICATE",
      });
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) {
        logger.info({ event: "turn_already_ended", workspaceId, actionId: result.actionId });
        return;
      }
      throw err;
    }
  }

  return {
    async announce({ workspaceId, actionIds }): Promise<void> {
      const state = await streams.state(workspaceId);
      const finals = [...new Set(actionIds)].flatMap((id) => {
        const a = state.actions.get(id);
        const result = a && turnResultOf(a);
        return a && result ? [{ a, result }] : [];
      });
      for (const { a, result } of finals) {
        if (a.description?.delivery === Delivery.DELIVERY_AWAIT && a.executionId) {
          await signalTurn(workspaceId, a.executionId, result);
        }
      }
      await Promise.all(
        finals
          .filter(({ result }) => result.status === "rejected")
          .map(async ({ a }) => {
            // The grant it was submitted under, which may have been removed since (its gatekeeper still drops it).
            const b = state.grants.get(a.grant);
            if (!b) return;
            try {
              await applier.notifyRejected(b.gatekeeper, {
                workspaceId,
                binding: a.binding,
                actionId: a.id,
                localId: a.localId,
              });
            } catch (err) {
              logger.warn({
                event: "reject_notice_failed",
                workspaceId,
                actionId: a.id,
                err: err instanceof GatekeeperCallError ? "gatekeeper unreachable or refused" : "error",
              });
            }
          }),
      );
    },

    async wakeBindings({ workspaceId, bindings }): Promise<void> {
      await Promise.all(
        bindings.map((binding) => {
          const input: BindingRunInput = { workspaceId, binding };
          return client.workflow.signalWithStart(BINDING_RUN_WORKFLOW, {
            workflowId: bindingRunWorkflowId(workspaceId, binding),
            taskQueue,
            args: [input],
            signal: bindingRunWakeSignal,
            signalArgs: [],
          });
        }),
      );
    },
  };
}
