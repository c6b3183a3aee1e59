/**
 * ApplyAction for MCP: called by the approval service after it appended the ActionApplying claim.
 * Connects to the resource and calls the staged tool EXACTLY ONCE with the staged arguments; never
 * retries (a retry could repeat a side effect; DESIGN.md "Apply is at most once").
 * `isError: true` -> {ok:false, error: the tool's text}; success -> {ok:true, resultJson}.
 * The tool call may take as long as the caller waits (the ApplyAction deadline, set from the
 * worker's GATEKEEPER_APPLY_MAX); a connection that closes, or a call that times out, before the
 * server answered is an unknown outcome (ServerUnavailable), never a known failure.
 */

import { type ApplyContext, truncateUtf8 } from "@gatehouse/gatekeeper-kit";
import type { ApplyActionRequest, ApplyActionResponse } from "@gatehouse/proto";
import { ErrorCode, McpError } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "pino";
import type { StagedPayload } from "./binding-service.ts";
import { toolErrorText } from "./binding-service.ts";
import type { ConnectionPool } from "./connections.ts";
import { InvalidRequest, ScopeViolation, ServerUnavailable } from "./errors.ts";
import type { RegistryConfig } from "./registry.ts";
import { resolveResourceUrl } from "./resource-url.ts";
import { scopePermits } from "./scope-fragment.ts";

/**
 * Parses `payload_json` as staged by a write.
 * @throws InvalidRequest naming `payload_json` when it is not `{tool: string, arguments: object}`.
 */
export function parseStagedPayload(json: string): StagedPayload {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    throw new InvalidRequest("payload_json is not JSON; it must be the payload this gatekeeper staged");
  }
  const p = v as Partial<StagedPayload> | null;
  if (
    !p ||
    typeof p !== "object" ||
    typeof p.tool !== "string" ||
    p.tool === "" ||
    !p.arguments ||
    typeof p.arguments !== "object" ||
    Array.isArray(p.arguments)
  ) {
    throw new InvalidRequest(
      "payload_json must be {tool: string, arguments: object} as staged by gatekeeper-mcp",
    );
  }
  return { tool: p.tool, arguments: p.arguments };
}

/** The longest a tool call of an apply may take when the caller set no deadline: 12 hours, in ms. */
export const APPLY_CALL_CEILING_MS = 12 * 60 * 60 * 1000;

/**
 * Performs one approved action.
 * @param ctx the caller's deadline (epoch ms), which bounds the tool call.
 * @throws InvalidRequest / resource URL errors / ScopeViolation before any request is made;
 *         connection failures surface as ServerUnavailable (before the call: it was not made;
 *         during it: its outcome is unknown, and the message says so).
 */
export async function applyAction(
  req: ApplyActionRequest,
  deps: { registry: RegistryConfig; pool: ConnectionPool; logger: Logger },
  ctx: ApplyContext = { deadline: Number.POSITIVE_INFINITY },
): Promise<ApplyActionResponse> {
  const log = deps.logger.child({ component: "apply", workspaceId: req.workspaceId, actionId: req.actionId });
  const payload = parseStagedPayload(req.payloadJson);
  const resource = resolveResourceUrl(req.url, deps.registry);
  if (!scopePermits(resource.scope, payload.tool)) {
    throw new ScopeViolation(
      `tool "${payload.tool}" is outside the scope of ${resource.normalizedUrl}; not applied`,
    );
  }
  await deps.pool.client(resource); // connect first: a connection failure means the call was never made
  let result: Awaited<ReturnType<ConnectionPool["callTool"]>>;
  try {
    const timeoutMs = Number.isFinite(ctx.deadline)
      ? Math.max(1, ctx.deadline - Date.now())
      : APPLY_CALL_CEILING_MS;
    result = await deps.pool.callTool(resource, payload.tool, payload.arguments, timeoutMs);
  } catch (err) {
    if (
      err instanceof McpError &&
      (err.code === ErrorCode.ConnectionClosed || err.code === ErrorCode.RequestTimeout)
    ) {
      log.warn({ event: "apply.lost", tool: payload.tool }, "tool call ended without an answer");
      throw new ServerUnavailable(
        `calling ${payload.tool}: the MCP server gave no answer (${err.code === ErrorCode.RequestTimeout ? "timed out" : "connection closed"}); it may have performed the call, so the outcome is unknown`,
      );
    }
    log.warn({ event: "apply.error", tool: payload.tool }, "tool call raised a protocol error");
    const { text } = truncateUtf8((err as Error).message ?? "unknown error", 2048);
    return { ok: false, resultJson: "", error: `calling ${payload.tool} failed: ${text}` };
  }
  if (result.isError === true) {
    log.info({ event: "apply.failed", tool: payload.tool }, "tool returned isError");
    return { ok: false, resultJson: "", error: toolErrorText(result) };
  }
  log.info({ event: "apply.ok", tool: payload.tool }, "action applied");
  return { ok: true, resultJson: JSON.stringify(result), error: "" };
}
