/**
 * Decision and outcome activities: each append goes through `WorkspaceStreams.execute` with the
 * domain's `decide`, so the stream stays the source of truth. Each is idempotent: a retried attempt
 * whose first try appended (but whose answer was lost) finds its own event and appends nothing.
 */
import {
  ActionNotFound,
  type AppendContext,
  ApprovalError,
  decide,
  WorkspaceNotFound,
} from "@gatehouse/approval-core";
import { ActionStatus } from "@gatehouse/proto";
import { Context } from "@temporalio/activity";
import type {
  ActionRef,
  ActionSnapshot,
  ApplyResult,
  DecisionResult,
  LifecycleActivities,
} from "../workflows/activity-api.ts";
import type { ActivityDeps } from "./deps.ts";
import { asActivityFailure } from "./errors.ts";
import { snapshotOf } from "./snapshot.ts";

/** Caller metadata of a decision by "user:<id>" (rules, expiry and services have none), plus the workflow id. */
function contextOf(decidedBy: string | undefined): AppendContext {
  const ctx: AppendContext = {};
  const workflowId = Context.current().info.workflowExecution?.workflowId;
  if (workflowId) ctx.correlationId = workflowId;
  const [kind, ...rest] = (decidedBy ?? "").split(":");
  if (kind === "user") ctx.caller = { kind: "user", id: rest.join(":") };
  return ctx;
}

/** True for a domain refusal the decider returns to the approver (not a missing workspace/action). */
function isRefusal(err: unknown): err is ApprovalError {
  return (
    err instanceof ApprovalError && !(err instanceof ActionNotFound) && !(err instanceof WorkspaceNotFound)
  );
}

const APPROVED_OR_LATER = new Set([
  ActionStatus.ACTION_STATUS_APPROVED,
  ActionStatus.ACTION_STATUS_APPLYING,
  ActionStatus.ACTION_STATUS_APPLIED,
  ActionStatus.ACTION_STATUS_FAILED,
]);

type DecisionActivities = Pick<
  LifecycleActivities,
  "readAction" | "recordApproval" | "recordRejection" | "recordOutcome"
>;

/** The stream activities: read an action, record a decision, record an apply outcome. */
export function decisionActivities({ streams }: ActivityDeps): DecisionActivities {
  async function refused(ref: ActionRef, err: ApprovalError): Promise<DecisionResult> {
    const state = await streams.state(ref.workspaceId);
    return { recorded: false, message: err.message, snapshot: snapshotOf(state, ref.actionId) };
  }

  return {
    async readAction(ref: ActionRef): Promise<ActionSnapshot> {
      try {
        return snapshotOf(await streams.state(ref.workspaceId), ref.actionId);
      } catch (err) {
        throw asActivityFailure(err);
      }
    },

    async recordApproval({ workspaceId, actionId, decidedBy }): Promise<DecisionResult> {
      const ref = { workspaceId, actionId };
      try {
        const { state } = await streams.execute(
          workspaceId,
          (s) => {
            const a = s.actions.get(actionId);
            if (a && APPROVED_OR_LATER.has(a.status) && a.decidedBy === decidedBy) return []; // our earlier attempt
            return decide(
              { type: "Approve", actionIds: [actionId], decidedBy, includeDependencies: false },
              s,
            );
          },
          contextOf(decidedBy),
        );
        return { recorded: true, snapshot: snapshotOf(state, actionId) };
      } catch (err) {
        if (isRefusal(err)) return refused(ref, err);
        throw asActivityFailure(err);
      }
    },

    async recordRejection({ workspaceId, actionId, decidedBy, reason }): Promise<DecisionResult> {
      const ref = { workspaceId, actionId };
      try {
        const { state } = await streams.execute(
          workspaceId,
          (s) => {
            const a = s.actions.get(actionId);
            const ours =
              a?.status === ActionStatus.ACTION_STATUS_REJECTED &&
              a.decidedBy === decidedBy &&
              a.reason === reason &&
              !a.cascadedFrom;
            if (ours) return [];
            return decide({ type: "Reject", actionId, decidedBy, reason }, s);
          },
          contextOf(decidedBy),
        );
        return { recorded: true, snapshot: snapshotOf(state, actionId) };
      } catch (err) {
        if (isRefusal(err)) return refused(ref, err);
        throw asActivityFailure(err);
      }
    },

    async recordOutcome({ workspaceId, actionId, result }): Promise<ActionSnapshot> {
      try {
        const { state } = await streams.execute(
          workspaceId,
          (s) => {
            const a = s.actions.get(actionId);
            if (
              a?.status === ActionStatus.ACTION_STATUS_APPLIED ||
              a?.status === ActionStatus.ACTION_STATUS_FAILED
            ) {
              return []; // recorded by an earlier attempt
            }
            return decide(outcomeCommand(actionId, result), s);
          },
          contextOf(undefined),
        );
        return snapshotOf(state, actionId);
      } catch (err) {
        throw asActivityFailure(err);
      }
    },
  };
}

function outcomeCommand(actionId: number, result: ApplyResult) {
  return result.kind === "applied"
    ? { type: "RecordApplied" as const, actionId, resultJson: result.resultJson }
    : {
        type: "RecordApplyFailed" as const,
        actionId,
        message: result.message,
        outcomeUnknown: result.outcomeUnknown,
      };
}
