/**
 * Announcing final actions (contract: lifecycle-contract.ts): each awaited action's turn is told
 * (signal-with-start), in the order given — a root before the rejections it cascaded, so the turn
 * names the person's reason — then the gatekeepers hear of the rejected ones (best effort, so they
 * drop them from their overlays). A turn hears all of its actions of one announcement in one
 * `actionsDecided` signal (split only when large, see `turnSignalChunks`); turns are told a few at
 * a time. Also the wake of other bindings' runs.
 */
import { type ActionState, GatekeeperCallError } from "@gatehouse/approval-core";
import {
  BINDING_RUN_WORKFLOW,
  type BindingRunInput,
  bindingRunWakeSignal,
  bindingRunWorkflowId,
  type FinalStatus,
  TURN_WORKFLOW,
  turnActionsDecidedSignal,
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

/** Decisions in one turn signal at most. */
const TURN_SIGNAL_MAX_DECISIONS = 200;
/** Result and reason characters in one turn signal at most (a larger single result goes alone). */
const TURN_SIGNAL_MAX_CHARS = 256 * 1024;
/** Turns signalled at once by one announcement. */
const TURN_SIGNAL_CONCURRENCY = 8;

/**
 * `results` (one turn's, in order) cut into consecutive signal payloads of at most
 * TURN_SIGNAL_MAX_DECISIONS decisions and TURN_SIGNAL_MAX_CHARS characters of results and reasons
 * (a result larger than that alone), order kept.
 */
export function turnSignalChunks(results: TurnResult[]): TurnResult[][] {
  const chunks: TurnResult[][] = [];
  let chunk: TurnResult[] = [];
  let chars = 0;
  for (const r of results) {
    const size = (r.resultJson?.length ?? 0) + (r.reason?.length ?? 0);
    if (
      chunk.length > 0 &&
      (chunk.length >= TURN_SIGNAL_MAX_DECISIONS || chars + size > TURN_SIGNAL_MAX_CHARS)
    ) {
      chunks.push(chunk);
      chunk = [];
      chars = 0;
    }
    chunk.push(r);
    chars += size;
  }
  if (chunk.length > 0) chunks.push(chunk);
  return chunks;
}

/** The announcement and wake activities. */
export function noticeActivities(deps: ActivityDeps): Pick<LifecycleActivities, "announce" | "wakeBindings"> {
  const { streams, applier, client, taskQueue, logger } = deps;

  async function signalTurn(workspaceId: string, turnId: string, decisions: TurnResult[]): Promise<void> {
    try {
      await client.workflow.signalWithStart(TURN_WORKFLOW, {
        workflowId: turnWorkflowId(workspaceId, turnId),
        taskQueue,
        args: [{ workspaceId, turnId }],
        signal: turnActionsDecidedSignal,
        signalArgs: [{ decisions }],
        // A turn that already ended must not be started again by a late decision.
        workflowIdReusePolicy: "REJECT_DUPLICATE",
      });
    } catch (err) {
      if (err instanceof WorkflowExecutionAlreadyStartedError) {
        logger.info({
          event: "turn_already_ended",
          workspaceId,
          turnId,
          actionIds: decisions.map((d) => d.actionId),
        });
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
      const byTurn = new Map<string, TurnResult[]>();
      for (const { a, result } of finals) {
        if (a.description?.delivery !== Delivery.DELIVERY_AWAIT || !a.executionId) continue;
        const turn = byTurn.get(a.executionId);
        if (turn) turn.push(result);
        else byTurn.set(a.executionId, [result]);
      }
      const turns = [...byTurn];
      for (let i = 0; i < turns.length; i += TURN_SIGNAL_CONCURRENCY) {
        await Promise.all(
          turns.slice(i, i + TURN_SIGNAL_CONCURRENCY).map(async ([turnId, results]) => {
            for (const chunk of turnSignalChunks(results)) await signalTurn(workspaceId, turnId, chunk);
          }),
        );
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
