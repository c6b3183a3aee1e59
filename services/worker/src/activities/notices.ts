/** Best-effort propagation: ActionRejected notices to gatekeepers, and decisions to turn workflows. */
import { GatekeeperCallError } from "@gatehouse/approval-core";
import {
  TURN_WORKFLOW,
  turnActionDecidedSignal,
  turnWorkflowId,
} from "@gatehouse/approval-core/lifecycle-contract";
import { WorkflowExecutionAlreadyStartedError } from "@temporalio/client";
import type { LifecycleActivities } from "../workflows/activity-api.ts";
import type { ActivityDeps } from "./deps.ts";

/** The notice and turn-signal activities. */
export function noticeActivities(
  deps: ActivityDeps,
): Pick<LifecycleActivities, "notifyRejected" | "signalTurn"> {
  const { streams, applier, client, taskQueue, logger } = deps;
  return {
    async notifyRejected({ workspaceId, actionIds }): Promise<void> {
      const state = await streams.state(workspaceId);
      await Promise.all(
        actionIds.map(async (actionId) => {
          const a = state.actions.get(actionId);
          // The grant it was submitted under, which may have been removed since (its gatekeeper still drops it).
          const b = a ? state.grants.get(a.grant) : undefined;
          if (!a || !b) return;
          try {
            await applier.notifyRejected(b.gatekeeper, {
              workspaceId,
              binding: a.binding,
              actionId,
              localId: a.localId,
            });
          } catch (err) {
            logger.warn({
              event: "reject_notice_failed",
              workspaceId,
              actionId,
              err: err instanceof GatekeeperCallError ? "gatekeeper unreachable or refused" : "error",
            });
          }
        }),
      );
    },

    async signalTurn({ workspaceId, turnId, result }): Promise<void> {
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
    },
  };
}
