/**
 * ApplyAction for MCP: called by the approval service after it appended the ActionApplying claim.
 * Connects to the resource and calls the staged tool EXACTLY ONCE with the staged arguments; never
 * retries (a retry could repeat a side effect; docs/architecture.md "The approval contract").
 * The tool call may take as long as the caller waits (the ApplyAction deadline, set from the
 * worker's GATEKEEPER_APPLY_MAX). Outcomes, by the kit's taxonomy (apply-outcome.ts; how errors
 * are read: transport-faults.ts):
 * - answered: `isError: true` or a JSON-RPC error answer -> {ok:false, error: the server's text};
 *   a result -> {ok:true, resultJson};
 * - not sent -> `NotSent` (recorded failed): the MCP session could not be opened (refused, DNS,
 *   TLS, a stdio command that does not start or exits at once), or the POST provably never left;
 * - sent, answer lost -> `AnswerLost` (outcome unknown): the connection closed or the stdio
 *   server exited before the answer, the answer stream broke, the call timed out, any other error.
 */
import { AnswerLost, type ApplyContext, applyFault, NotSent, truncateUtf8 } from "@gatehouse/gatekeeper-kit";
import type { ApplyActionRequest, ApplyActionResponse } from "@gatehouse/proto";
import type { Logger } from "pino";
import type { StagedPayload } from "./binding-service.ts";
import { toolErrorText } from "./binding-service.ts";
import type { ConnectionPool } from "./connections.ts";
import { InvalidRequest, ScopeViolation, ServerUnavailable } from "./errors.ts";
import type { RegistryConfig } from "./registry.ts";
import { resolveResourceUrl } from "./resource-url.ts";
import { scopePermits } from "./scope-fragment.ts";
import { ConnectFailed, classifyCallError, endpointOf } from "./transport-faults.ts";

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
 *         NotSent when the call was never sent (the session could not be opened, the gatekeeper
 *         is shutting down, a network error that proves it); AnswerLost when it may have reached
 *         the server and no answer came (the message says the outcome is unknown).
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
  const what = `calling ${payload.tool}`;
  let result: Awaited<ReturnType<ConnectionPool["callTool"]>>;
  try {
    await deps.pool.client(resource); // connect first: a connection failure means the call was never made
    const timeoutMs = Number.isFinite(ctx.deadline)
      ? Math.max(1, ctx.deadline - Date.now())
      : APPLY_CALL_CEILING_MS;
    result = await deps.pool.callTool(resource, payload.tool, payload.arguments, timeoutMs);
  } catch (err) {
    if (err instanceof ConnectFailed || err instanceof ServerUnavailable) {
      // Thrown only before the tool call was sent: opening the session, or shutting down.
      log.warn({ event: "apply.not_sent", tool: payload.tool }, "the MCP session could not be opened");
      throw new NotSent(
        err instanceof ConnectFailed ? err.messageFor(what) : `${what} was not sent: ${err.message}`,
      );
    }
    const end = classifyCallError(err);
    if (end.answered) {
      log.warn(
        { event: "apply.error", tool: payload.tool },
        "the server answered the tool call with an error",
      );
      const { text } = truncateUtf8(end.error, 2048);
      return { ok: false, resultJson: "", error: `${what} failed: ${text}` };
    }
    const fault = applyFault(what, endpointOf(resource), end.fault);
    log.warn(
      {
        event: fault instanceof AnswerLost ? "apply.lost" : "apply.not_sent",
        tool: payload.tool,
        cause: end.fault.cause,
      },
      fault instanceof AnswerLost ? "tool call ended without an answer" : "tool call was not sent",
    );
    throw fault;
  }
  if (result.isError === true) {
    log.info({ event: "apply.failed", tool: payload.tool }, "tool returned isError");
    return { ok: false, resultJson: "", error: toolErrorText(result) };
  }
  log.info({ event: "apply.ok", tool: payload.tool }, "action applied");
  return { ok: true, resultJson: JSON.stringify(result), error: "" };
}
