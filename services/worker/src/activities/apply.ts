/**
 * The at-most-once apply (DESIGN.md "Approve ... Apply is at most once"). One activity:
 * (a) checks the gatekeeper accepts connections — if not, nothing is claimed and a RETRYABLE error
 *     is thrown (on the last allowed attempt the claim is taken and a "not sent" failure returned,
 *     so the stream records the end);
 * (b) appends the claim (ActionApplying, claimedBy `<workflowId>/<runId>/attempt-<n>`);
 * (c) calls ApplyAction, heartbeating every second for as long as the gatekeeper reports the call
 *     running (heartbeat details: `{ gatekeeperRunningMs }`), up to the gatekeeper kind's maximum
 *     (GATEKEEPER_APPLY_MAX). A call still running at the maximum, or lost (connection dropped,
 *     gatekeeper silent or dead), is recorded as "outcome unknown", worded for which it was.
 * A later attempt that finds an unmatched claim (status APPLYING) never calls the gatekeeper again:
 * the request may have been sent, so it returns "outcome unknown".
 */

import { decide, GatekeeperCallError, type WorkspaceState } from "@gatehouse/approval-core";
import { ActionStatus } from "@gatehouse/proto";
import { ApplicationFailure, Context } from "@temporalio/activity";
import type { ActionRef, ApplyResult, LifecycleActivities } from "../workflows/activity-api.ts";
import { APPLY_MAX_ATTEMPTS } from "../workflows/activity-options.ts";
import type { ActivityDeps } from "./deps.ts";
import { asActivityFailure } from "./errors.ts";

/** How often the apply heartbeats while the gatekeeper works, in ms. */
const HEARTBEAT_EVERY_MS = 1000;

const UNKNOWN_SUFFIX =
  "; the request may have been sent, so the outcome is unknown: check the external system before acting again";

/** The apply activity. */
export function applyActivities(deps: ActivityDeps): Pick<LifecycleActivities, "applyAction"> {
  const { streams, applier, logger } = deps;

  async function claim(ref: ActionRef, claimedBy: string): Promise<WorkspaceState> {
    try {
      const { state } = await streams.execute(ref.workspaceId, (s) =>
        decide({ type: "ClaimApply", actionId: ref.actionId, claimedBy }, s),
      );
      return state;
    } catch (err) {
      throw asActivityFailure(err);
    }
  }

  return {
    async applyAction(ref: ActionRef): Promise<ApplyResult> {
      const ctx = Context.current();
      const { attempt, workflowExecution } = ctx.info;
      const claimedBy = `${workflowExecution?.workflowId}/${workflowExecution?.runId}/attempt-${attempt}`;
      let state: WorkspaceState;
      try {
        state = await streams.state(ref.workspaceId);
      } catch (err) {
        throw asActivityFailure(err);
      }
      const a = state.actions.get(ref.actionId);
      if (!a)
        throw ApplicationFailure.nonRetryable(`action ${ref.actionId} does not exist`, "ActionNotFound");
      switch (a.status) {
        case ActionStatus.ACTION_STATUS_APPLYING:
          logger.warn({
            event: "apply_claim_unmatched",
            workspaceId: ref.workspaceId,
            actionId: ref.actionId,
          });
          return {
            kind: "failed",
            message: `the apply claimed by ${a.claimedBy} never reported an outcome (its worker stopped)${UNKNOWN_SUFFIX}`,
            outcomeUnknown: true,
          };
        case ActionStatus.ACTION_STATUS_APPLIED:
          return { kind: "applied", resultJson: a.resultJson };
        case ActionStatus.ACTION_STATUS_FAILED:
          return { kind: "failed", message: a.reason, outcomeUnknown: a.outcomeUnknown };
        case ActionStatus.ACTION_STATUS_APPROVED:
          break;
        default:
          throw ApplicationFailure.nonRetryable(
            `action ${ref.actionId} is not approved; it cannot be applied`,
            "ActionStateConflict",
          );
      }
      const deadDependency = a.dependsOn.find((d) => {
        const s = state.actions.get(d)?.status;
        return s === ActionStatus.ACTION_STATUS_REJECTED || s === ActionStatus.ACTION_STATUS_FAILED;
      });
      if (deadDependency !== undefined) {
        throw ApplicationFailure.nonRetryable(
          `action ${ref.actionId} needs action ${deadDependency}, which did not complete; the request was not sent`,
          "DependencyDidNotComplete",
        );
      }
      const waitingFor = a.dependsOn.filter(
        (d) => state.actions.get(d)?.status !== ActionStatus.ACTION_STATUS_APPLIED,
      );
      if (waitingFor.length > 0) {
        throw ApplicationFailure.retryable(
          `action ${ref.actionId} waits for its dependencies ${waitingFor.join(", ")} to be applied`,
          "DependenciesNotApplied",
        );
      }
      const binding = state.bindings.get(a.binding);
      if (binding?.grant !== a.grant) {
        // Removed (or removed and introduced again: a new grant); nothing is claimed, nothing sent.
        throw ApplicationFailure.nonRetryable(
          `action ${ref.actionId} cannot be applied: binding ${a.binding} was removed after it was submitted; the request was not sent`,
          "BindingRemoved",
        );
      }
      if (applier.ready) {
        try {
          await applier.ready(binding.gatekeeper);
        } catch (err) {
          const message =
            err instanceof GatekeeperCallError
              ? err.message
              : `gatekeeper "${binding.gatekeeper}" is not reachable`;
          if (attempt < APPLY_MAX_ATTEMPTS)
            throw ApplicationFailure.retryable(message, "GatekeeperUnreachable");
          await claim(ref, claimedBy);
          return { kind: "failed", message: `${message} after ${attempt} attempts`, outcomeUnknown: false };
        }
      }
      const claimed = await claim(ref, claimedBy);
      const action = claimed.actions.get(ref.actionId) ?? a;
      const request = {
        workspaceId: ref.workspaceId,
        binding: action.binding,
        url: binding.url,
        trust: binding.trust,
        actionId: ref.actionId,
        localId: action.localId,
        payloadJson: action.payloadJson,
        dependencyResults: Object.fromEntries(
          action.dependsOn.flatMap((d) => {
            const dep = claimed.actions.get(d);
            return dep?.status === ActionStatus.ACTION_STATUS_APPLIED ? [[dep.localId, dep.resultJson]] : [];
          }),
        ),
      };
      let gatekeeperRunningMs = 0;
      ctx.heartbeat({ gatekeeperRunningMs });
      const beat = setInterval(() => ctx.heartbeat({ gatekeeperRunningMs }), HEARTBEAT_EVERY_MS);
      try {
        const response = await applier.apply(binding.gatekeeper, request, {
          onRunning: (elapsedMs) => {
            gatekeeperRunningMs = elapsedMs;
          },
        });
        if (!response.ok) {
          return {
            kind: "failed",
            message: response.error || "the gatekeeper reported a failure without a message",
            outcomeUnknown: false,
          };
        }
        return { kind: "applied", resultJson: response.resultJson };
      } catch (err) {
        const maybeSent = err instanceof GatekeeperCallError ? err.requestMaybeSent : true;
        const message = err instanceof GatekeeperCallError ? err.message : "the gatekeeper call failed";
        const explained = err instanceof GatekeeperCallError && err.stillRunning; // says it itself
        return {
          kind: "failed",
          message: maybeSent && !explained ? `${message}${UNKNOWN_SUFFIX}` : message,
          outcomeUnknown: maybeSent,
        };
      } finally {
        clearInterval(beat);
      }
    },
  };
}
