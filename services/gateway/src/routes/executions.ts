/**
 * GET /api/workspaces/:ws/executions/:executionId (@gatehouse/gateway-contract executions.ts) over
 * Kernel.GetExecution. Who may read is decided by the app's membership hook before any handler
 * (owner, members and auditors of the workspace); the kernel's NOT_FOUND names the execution.
 */
import type { ExecutionView } from "@gatehouse/gateway-contract";
import type { FastifyInstance } from "fastify";
import { z } from "zod";
import type { Backends } from "../backends.ts";
import { WorkspaceParam } from "./params.ts";

const ExecutionParams = WorkspaceParam.extend({
  executionId: z
    .string()
    .regex(/^[A-Za-z0-9._:-]{1,200}$/, "an execution id has 1-200 letters, digits or . _ : -"),
});

/** Registers the execution route. */
export function executionRoutes(app: FastifyInstance, backends: Backends): void {
  app.get("/api/workspaces/:ws/executions/:executionId", async (req): Promise<ExecutionView> => {
    const { ws, executionId } = ExecutionParams.parse(req.params);
    const v = await backends.kernelCall(backends.kernel.getExecution, {
      workspaceId: ws,
      executionId,
    });
    return {
      executionId: v.executionId,
      code: v.code,
      codeTruncated: v.codeTruncated,
      console: v.console,
      consoleTruncated: v.consoleTruncated,
      ok: v.ok,
      error: v.error,
      durationMs: v.durationMs,
      executedAt: v.executedAt,
      ...(v.chatMessage ? { chatMessage: v.chatMessage } : {}),
      actionIds: v.actionIds.map(Number),
    };
  });
}
