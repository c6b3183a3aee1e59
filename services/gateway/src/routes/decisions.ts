/**
 * Decision routes: approve (optionally with undecided dependencies), reject (reason required),
 * approve a batch (applied in submission order), withdraw approvals not yet applying, set an auto-approval rule (admin), remove a
 * binding (the workspace's owner; the kernel's RemoveBinding). Membership of the workspace is
 * checked before any of them (app.ts, auth/membership.ts). The person's
 * subject is recorded as `decidedBy` / `setBy`; the role is checked here, before the approval service
 * is called, so an auditor's request is refused by the API whatever the UI shows.
 */
import {
  ApproveBatchBody,
  ApproveBody,
  type DecisionResult,
  RejectBody,
  RemoveBindingBody,
  type RemoveBindingResult,
  SetRuleBody,
  type SetRuleResponse,
  WithdrawBody,
} from "@gatehouse/gateway-contract";
import type { FastifyInstance } from "fastify";
import { requireOwnerOf } from "../auth/membership.ts";
import { requireAdmin, requireDecider } from "../auth/person.ts";
import type { Backends } from "../backends.ts";
import { toAction } from "../mapping.ts";
import type { GatewayMetrics } from "../metrics.ts";
import { ActionParams, BindingParams, WorkspaceParam } from "./params.ts";

/** `descriptionDigests` of a request body (decimal action ids) as the approval service's map. */
export function digestsByAction(digests: Record<string, string> | undefined): Record<number, string> {
  const out: Record<number, string> = {};
  for (const [id, digest] of Object.entries(digests ?? {})) out[Number(id)] = digest;
  return out;
}

/** Registers the decision routes. */
export function decisionRoutes(app: FastifyInstance, backends: Backends, metrics: GatewayMetrics): void {
  const counted = async <T>(kind: string, run: () => Promise<T>): Promise<T> => {
    try {
      const out = await run();
      metrics.decisions.inc({ kind, outcome: "ok" });
      return out;
    } catch (err) {
      const status = (err as { statusCode?: number }).statusCode ?? 500;
      metrics.decisions.inc({ kind, outcome: status < 500 ? "refused" : "error" });
      throw err;
    }
  };

  app.post(
    "/api/workspaces/:ws/actions/:id/approve",
    async (req): Promise<DecisionResult> =>
      counted("approve", async () => {
        requireDecider(req.person);
        const { ws, id } = ActionParams.parse(req.params);
        const body = ApproveBody.parse(req.body ?? {});
        const res = await backends.approval(backends.decisions.approve, {
          workspaceId: ws,
          actionId: id,
          decidedBy: req.person.subject,
          includeDependencies: body.includeDependencies,
          descriptionDigests: digestsByAction(body.descriptionDigests),
        });
        return { actions: res.actions.map(toAction) };
      }),
  );

  app.post(
    "/api/workspaces/:ws/actions/:id/reject",
    async (req): Promise<DecisionResult> =>
      counted("reject", async () => {
        requireDecider(req.person);
        const { ws, id } = ActionParams.parse(req.params);
        const body = RejectBody.parse(req.body ?? {});
        const res = await backends.approval(backends.decisions.reject, {
          workspaceId: ws,
          actionId: id,
          decidedBy: req.person.subject,
          reason: body.reason,
        });
        return { actions: res.actions.map(toAction) };
      }),
  );

  app.post(
    "/api/workspaces/:ws/approve-batch",
    async (req): Promise<DecisionResult> =>
      counted("approve_batch", async () => {
        requireDecider(req.person);
        const { ws } = WorkspaceParam.parse(req.params);
        const body = ApproveBatchBody.parse(req.body ?? {});
        const res = await backends.approval(
          backends.decisions.approveBatch,
          {
            workspaceId: ws,
            actionIds: [...new Set(body.actionIds)],
            decidedBy: req.person.subject,
            all: false,
            returnOnceRecorded: body.returnOnceRecorded ?? false,
            descriptionDigests: digestsByAction(body.descriptionDigests),
          },
          120_000,
        );
        return { actions: res.actions.map(toAction) };
      }),
  );

  app.post(
    "/api/workspaces/:ws/withdraw",
    async (req): Promise<DecisionResult> =>
      counted("withdraw", async () => {
        requireDecider(req.person);
        const { ws } = WorkspaceParam.parse(req.params);
        const body = WithdrawBody.parse(req.body ?? {});
        const res = await backends.approval(backends.decisions.withdrawApproval, {
          workspaceId: ws,
          actionIds: [...new Set(body.actionIds)],
          withdrawnBy: req.person.subject,
          reason: body.reason ?? "",
        });
        return { actions: res.actions.map(toAction) };
      }),
  );

  app.put(
    "/api/workspaces/:ws/rules",
    async (req): Promise<SetRuleResponse> =>
      counted("rule", async () => {
        requireAdmin(req.person);
        const { ws } = WorkspaceParam.parse(req.params);
        const body = SetRuleBody.parse(req.body ?? {});
        const res = await backends.approval(backends.decisions.setAutoApprovalRule, {
          workspaceId: ws,
          binding: body.binding,
          actionKindTag: body.actionKindTag,
          enabled: body.enabled,
          setBy: req.person.subject,
        });
        return { drained: res.drained.map(toAction) };
      }),
  );

  app.post(
    "/api/workspaces/:ws/bindings/:binding/remove",
    async (req): Promise<RemoveBindingResult> =>
      counted("remove_binding", async () => {
        requireOwnerOf(req.membership, "removing a binding");
        const { ws, binding } = BindingParams.parse(req.params);
        const body = RemoveBindingBody.parse(req.body ?? {});
        const res = await backends.kernelCall(backends.kernel.removeBinding, {
          workspaceId: ws,
          binding,
          removedBy: req.person.subject,
          reason: body.reason,
        });
        return { binding: res.binding, rejected: res.rejectedActionIds, cascaded: res.cascadedActionIds };
      }),
  );
}
