/**
 * Thin gRPC handlers for ApprovalQueue (gatekeeper-facing, caller-token authenticated) and
 * Decisions (people-facing) of proto/gatehouse/v1/approval.proto: decode, authorize, call the
 * domain/lifecycle, map errors in one place (errors.ts). A submission the restricted-data latch
 * refuses is recorded (ActionRefused) before SubmitAction fails with FAILED_PRECONDITION. A retried
 * SubmitAction or AuthorizeObservation that matches what was recorded gets the recorded id back.
 */

import {
  ActionNotFound,
  decide,
  InvalidField,
  localIdKey,
  NotCallersAction,
  recordedObservationId,
  toActionRecord,
  type WorkspaceStreams,
} from "@gatehouse/approval-core";
import { verifyCallerToken } from "@gatehouse/caller-token";
import {
  ActionStatus,
  type ApprovalQueueServer,
  type DecisionsServer,
  type LogChange,
  type WatchLogRequest,
} from "@gatehouse/proto";
import type { ReadModel } from "@gatehouse/read-model";
import { currentTraceparent } from "@gatehouse/telemetry";
import type {
  ServerUnaryCall,
  ServerWritableStream,
  sendUnaryData,
  UntypedServiceImplementation,
} from "@grpc/grpc-js";
import { status as grpcStatus } from "@grpc/grpc-js";
import type { Logger } from "pino";
import { toServiceError, toStatus } from "./errors.ts";
import type { ActionLifecycle } from "./lifecycle/action-lifecycle.ts";
import type { RpcMetrics } from "./metrics.ts";
import { liveLog, pendingActionIds, replayLog, verifyWorkspace, watchLog } from "./queries.ts";
import { getActionDetail, getInbox, getLogPage } from "./read-model-queries.ts";
import type { RevertRequests } from "./revert.ts";

/** A provisional local id ("~N"), as gatekeepers hand them out. */
const PROVISIONAL_LOCAL_ID = /^~[1-9][0-9]*$/;

/** What the handlers need. */
export interface HandlerDeps {
  streams: WorkspaceStreams;
  /** Projection tables answering GetInbox, GetActionDetail and GetLogPage. */
  readModel: ReadModel;
  lifecycle: ActionLifecycle;
  /** RequestRevert: PrepareRevert at the binding's gatekeeper, then submission of the revert. */
  reverts: RevertRequests;
  /** HMAC secret shared with the kernel (≥ 32 bytes). */
  callerTokenSecret: string;
  logger: Logger;
  /** Per-call count by method and status code, and latency (absent: nothing recorded). */
  metrics?: RpcMetrics | undefined;
  /**
   * With tracing on: adds span links from the active (Approve) span to the spans that submitted
   * `actionIds` (their ActionSubmitted events' traceparent). Never throws.
   */
  linkSubmissions?: (workspaceId: string, actionIds: number[]) => Promise<void>;
}

/**
 * When to stop waiting so the answer still reaches the caller: the call's deadline less a margin,
 * in ms since the epoch; undefined when the call has no deadline.
 */
function answerBy(call: ServerUnaryCall<unknown, unknown>): number | undefined {
  const d = call.getDeadline();
  const ms = d instanceof Date ? d.getTime() : d;
  if (!Number.isFinite(ms)) return undefined;
  return ms - Math.min(1000, Math.max(100, (ms - Date.now()) / 10));
}

function unary<Req, Res>(
  deps: HandlerDeps,
  rpc: string,
  fn: (req: Req, call: ServerUnaryCall<Req, Res>) => Promise<Res>,
) {
  return (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>): void => {
    const stop = deps.metrics?.rpcSeconds.startTimer({ method: rpc });
    fn(call.request, call).then(
      (res) => {
        stop?.();
        deps.metrics?.rpcs.inc({ method: rpc, code: "OK" });
        callback(null, res);
      },
      (err: unknown) => {
        stop?.();
        const s = toStatus(err);
        if (!s.expected) deps.logger.error({ event: "rpc_failed", rpc, err }, "unexpected error");
        else deps.logger.info({ event: "rpc_refused", rpc, code: s.code });
        const se = toServiceError(err);
        deps.metrics?.rpcs.inc({ method: rpc, code: grpcStatus[se.code ?? grpcStatus.UNKNOWN] ?? "UNKNOWN" });
        callback(se);
      },
    );
  };
}

function requireWorkspace(workspaceId: string): string {
  if (!workspaceId) throw new InvalidField("workspace_id", "set the workspace id");
  return workspaceId;
}

/** ApprovalQueue handlers. Identity (workspace, binding, caller, execution) comes only from the verified token. */
export function approvalQueueHandlers(deps: HandlerDeps): ApprovalQueueServer & UntypedServiceImplementation {
  const { streams, lifecycle } = deps;
  const claimsOf = (token: string) => verifyCallerToken(deps.callerTokenSecret, token);
  return {
    authorizeObservation: unary(deps, "AuthorizeObservation", async (req) => {
      const t = claimsOf(req.callerToken);
      const command = {
        type: "RecordObservation" as const,
        binding: t.binding,
        grant: t.grant,
        description: req.description,
        executionId: t.executionId,
        requestId: req.requestId,
      };
      const { events, state } = await streams.execute(t.workspaceId, (s) => decide(command, s), {
        caller: t.caller,
        correlationId: t.executionId,
        traceparent: currentTraceparent(),
      });
      // No event: a retry of a recorded read, answered with the observation it recorded.
      return { observationId: events[0]?.revision ?? recordedObservationId(state, command) ?? 0 };
    }),
    submitAction: unary(deps, "SubmitAction", async (req) => {
      const t = claimsOf(req.callerToken);
      const { events, state: after } = await streams.execute(
        t.workspaceId,
        (s) =>
          decide(
            {
              type: "SubmitAction",
              binding: t.binding,
              grant: t.grant,
              localId: req.localId,
              description: req.description,
              payloadJson: req.payloadJson,
              executionId: t.executionId,
            },
            s,
          ),
        // A latch refusal is appended as ActionRefused first, then thrown (FAILED_PRECONDITION).
        // The submission's span: the approval's and the apply's traces link back to it.
        { caller: t.caller, correlationId: t.executionId, traceparent: currentTraceparent() },
      );
      // No event: a retry of a recorded submission, answered with the action it recorded. The
      // auto-approval drain runs in the background (never on the agent's path; repeating it is harmless).
      const actionId = events[0]?.revision ?? after.localIds.get(localIdKey(t.binding, req.localId)) ?? 0;
      void lifecycle.afterSubmit(t.workspaceId, actionId);
      return { actionId, status: after.actions.get(actionId)?.status ?? ActionStatus.ACTION_STATUS_PENDING };
    }),
    getActionForCaller: unary(deps, "GetActionForCaller", async (req) => {
      const t = claimsOf(req.callerToken);
      const state = await streams.state(t.workspaceId);
      const a = state.actions.get(req.actionId);
      // One answer for "no such action" and "another binding's action", so an agent cannot probe ids.
      // An action of a removed grant is not the caller's, even under the same binding name.
      if (!a || a.binding !== t.binding || a.grant !== state.bindings.get(t.binding)?.grant) {
        throw new NotCallersAction(req.actionId, t.binding);
      }
      return toActionRecord(state, a);
    }),
    listUnappliedForCaller: unary(deps, "ListUnappliedForCaller", async (req) => {
      const t = claimsOf(req.callerToken);
      const state = await streams.state(t.workspaceId);
      const open = new Set([
        ActionStatus.ACTION_STATUS_PENDING,
        ActionStatus.ACTION_STATUS_APPROVED,
        ActionStatus.ACTION_STATUS_APPLYING,
      ]);
      const grant = state.bindings.get(t.binding)?.grant;
      const actions = [...state.actions.values()]
        .filter((a) => a.binding === t.binding && a.grant === grant && open.has(a.status))
        .sort((x, y) => x.id - y.id)
        .map((a) => ({ action: toActionRecord(state, a), payloadJson: a.payloadJson }));
      const prefix = localIdKey(t.binding, "");
      const usedLocalIds = [...state.localIds.keys()]
        .filter((k) => k.startsWith(prefix))
        .map((k) => k.slice(prefix.length));
      // What each applied provisional id became (only "~N" ids: the rest are permanent already).
      const applied = [...state.actions.values()]
        .filter(
          (a) =>
            a.binding === t.binding &&
            a.grant === grant &&
            a.status === ActionStatus.ACTION_STATUS_APPLIED &&
            PROVISIONAL_LOCAL_ID.test(a.localId),
        )
        .sort((x, y) => x.id - y.id)
        .map((a) => ({ localId: a.localId, resultJson: a.resultJson }));
      return { actions, usedLocalIds, applied };
    }),
  };
}

/** A request's `description_digests` (proto map: number keys) as a Map; empty when none were sent. */
function digestMap(digests: { [id: number]: string } | undefined): ReadonlyMap<number, string> {
  return new Map(Object.entries(digests ?? {}).map(([id, d]) => [Number(id), d]));
}

/** Decisions handlers (people-facing; authentication of people is the gateway's job). */
export function decisionsHandlers(deps: HandlerDeps): DecisionsServer & UntypedServiceImplementation {
  const { streams, lifecycle } = deps;
  return {
    approve: unary(deps, "Approve", async (req, call) => {
      const deadlineMs = answerBy(call);
      await deps.linkSubmissions?.(req.workspaceId, [req.actionId]);
      return {
        actions: await lifecycle.approve(requireWorkspace(req.workspaceId), [req.actionId], req.decidedBy, {
          includeDependencies: req.includeDependencies,
          returnOnceRecorded: req.returnOnceRecorded ?? false,
          descriptionDigests: digestMap(req.descriptionDigests),
          ...(deadlineMs === undefined ? {} : { deadlineMs }),
        }),
      };
    }),
    approveBatch: unary(deps, "ApproveBatch", async (req, call) => {
      const ws = requireWorkspace(req.workspaceId);
      if (req.all && req.actionIds.length > 0) {
        throw new InvalidField("action_ids", "leave action_ids empty when all is set, or unset all");
      }
      const ids = req.all ? await pendingActionIds(streams, ws) : req.actionIds;
      if (ids.length === 0 && req.all) return { actions: [] };
      const deadlineMs = answerBy(call);
      await deps.linkSubmissions?.(ws, ids);
      return {
        actions: await lifecycle.approve(ws, ids, req.decidedBy, {
          returnOnceRecorded: req.returnOnceRecorded,
          descriptionDigests: digestMap(req.descriptionDigests),
          ...(deadlineMs === undefined ? {} : { deadlineMs }),
        }),
      };
    }),
    reject: unary(deps, "Reject", async (req) => ({
      actions: await lifecycle.reject(
        requireWorkspace(req.workspaceId),
        req.actionId,
        req.decidedBy,
        req.reason,
      ),
    })),
    withdrawApproval: unary(deps, "WithdrawApproval", async (req) => ({
      actions: await lifecycle.withdraw(
        requireWorkspace(req.workspaceId),
        req.actionIds,
        req.withdrawnBy,
        req.reason,
      ),
    })),
    requestRevert: unary(deps, "RequestRevert", async (req) => ({
      revert: await deps.reverts.request(requireWorkspace(req.workspaceId), req.actionId, req.requestedBy),
    })),
    setAutoApprovalRule: unary(deps, "SetAutoApprovalRule", async (req) => ({
      drained: await lifecycle.setAutoApprovalRule(requireWorkspace(req.workspaceId), {
        // Binding names are upper case (the kernel upper-cases them at IntroduceResource and
        // RemoveBinding), so `files` names FILES here too.
        binding: req.binding.trim().toUpperCase(),
        actionKindTag: req.actionKindTag,
        enabled: req.enabled,
        setBy: req.setBy,
      }),
    })),
    listActions: unary(deps, "ListActions", async (req) => {
      const state = await streams.state(requireWorkspace(req.workspaceId));
      const actions = [...state.actions.values()]
        .filter((a) => !req.pendingOnly || a.status === ActionStatus.ACTION_STATUS_PENDING)
        .map((a) => toActionRecord(state, a));
      return { actions };
    }),
    getAction: unary(deps, "GetAction", async (req) => {
      const ws = requireWorkspace(req.workspaceId);
      const state = await streams.state(ws);
      const a = state.actions.get(req.actionId);
      if (!a) throw new ActionNotFound(ws, req.actionId);
      return toActionRecord(state, a);
    }),
    getLog: unary(deps, "GetLog", (req) => liveLog(streams, requireWorkspace(req.workspaceId))),
    replay: unary(deps, "Replay", (req) =>
      replayLog(streams, requireWorkspace(req.workspaceId), req.untilRevision),
    ),
    verify: unary(deps, "Verify", (req) => verifyWorkspace(streams, requireWorkspace(req.workspaceId))),
    getInbox: unary(deps, "GetInbox", (req) => getInbox(deps.readModel, req)),
    getActionDetail: unary(deps, "GetActionDetail", (req) => getActionDetail(deps.readModel, req)),
    getLogPage: unary(deps, "GetLogPage", (req) => getLogPage(deps.readModel, req)),
    watchLog: (call: ServerWritableStream<WatchLogRequest, LogChange>) => {
      const fail = (err: unknown) => {
        if (!toStatus(err).expected)
          deps.logger.error({ event: "rpc_failed", rpc: "WatchLog", err }, "unexpected error");
        // emit("error") sends the status to the client; destroy(err) would leave it waiting forever.
        call.emit("error", toServiceError(err));
      };
      let closed = false;
      const subscription = (async () => {
        const ws = requireWorkspace(call.request.workspaceId);
        return watchLog(streams, ws, call.request.fromRevision, (c) => call.write(c), fail);
      })();
      subscription.then((sub) => {
        if (closed) void sub.close();
      }, fail);
      call.on("cancelled", () => {
        closed = true;
        void subscription.then((s) => s.close()).catch(() => undefined);
      });
      call.on("close", () => {
        closed = true;
        void subscription.then((s) => s.close()).catch(() => undefined);
      });
    },
  };
}
