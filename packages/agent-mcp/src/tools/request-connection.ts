/**
 * `request_connection`: the agent asks a person to introduce a resource it lacks (a URL and why).
 * Connections.RequestConnection records the request (its gatekeeper checks the URL without
 * connecting to it), then the tool waits, like wait_for_decisions, in slices of GetConnectionRequest
 * (wait) with progress notifications, until a person accepted (the binding's name: `env.NAME` in the
 * next execute_code; the tool list changes too) or declined (their reason), or the wait ran out
 * (call again with `request_id`).
 */
import type { ConnectionRequest, ConnectionsClient } from "@gatehouse/proto";
import { z } from "zod";
import { unaryCall } from "../grpc-call.ts";
import { kernelErrorText } from "../kernel-errors.ts";
import { type AgentTool, type ToolExtra, toolError } from "../tool-registry.ts";
import {
  DEFAULT_WAIT_SECONDS,
  MAX_WAIT_SECONDS,
  SLICE_SECONDS,
  waitInSlices,
  waitSecondsInput,
} from "./wait-slices.ts";

/** The tool's name, on the MCP surface and in the built-in agent. */
export const REQUEST_CONNECTION = "request_connection";

/**
 * The arguments both surfaces take (the MCP tool adds `timeout_seconds`): a new request (`url` and
 * `reason`) or an earlier one (`request_id`). Which combination is valid is `connectionArgsProblem`'s job.
 */
export const connectionRequestArgs = z.object({
  url: z
    .string()
    .min(1)
    .max(2048)
    .optional()
    .describe(
      "The resource to ask for, e.g. mcp://files#tool=read_text_file (a registered MCP server, narrowed to tools), https://host/mcp, git+file:///path/repo.git#branch=main, postgres://crm/shop#table=sales.orders (a registered PostgreSQL server and database, narrowed to tables)",
    ),
  reason: z
    .string()
    .min(1)
    .max(2000)
    .optional()
    .describe("Why you need it, for the person deciding (required with url)"),
  request_id: z
    .number()
    .int()
    .min(1)
    .optional()
    .describe("Instead of url and reason: a request this tool returned earlier, to learn its state"),
});
/** Parsed arguments of either surface. */
export type ConnectionRequestArgs = z.infer<typeof connectionRequestArgs>;

/**
 * What is wrong with a parsed argument object beyond its fields' types: both or neither of url and
 * request_id, or url without reason. "" when it can be sent.
 */
export function connectionArgsProblem(args: ConnectionRequestArgs): string {
  const byId = args.request_id !== undefined;
  if (byId === (args.url !== undefined))
    return 'Give either url and reason (a new request) or request_id (an earlier one), e.g. {"url": "mcp://files", "reason": "to read the specs"}';
  if (!byId && args.reason === undefined)
    return "reason is required with url: say why you need the resource, for the person deciding";
  return "";
}

/** The first lines of the tool's description on every surface: what a connection request is. */
export const CONNECTION_REQUEST_PURPOSE = [
  "Ask a person to introduce a resource this workspace lacks: give its url and why you need it. Nothing is",
  "connected until a person accepts in the approver's inbox; they may narrow its scope fragment (e.g. fewer",
  "#tool= entries) or decline with a reason. Asking again for the same url while it waits returns the same request.",
].join("\n");

const input = connectionRequestArgs.extend({
  request_id: connectionRequestArgs.shape.request_id.describe(
    "Instead of url and reason: keep waiting on a request this tool returned as still pending",
  ),
  timeout_seconds: waitSecondsInput("a person's decision"),
});

/** The shape of `structuredContent`. */
export const requestConnectionOutput = z.object({
  requestId: z.number(),
  state: z.string().describe('"pending" (still waiting), "accepted" or "declined"'),
  stillWaiting: z.boolean().describe("true when the wait timed out: call again with request_id"),
  url: z.string().describe("the URL as requested"),
  binding: z.string().describe("once accepted: the binding name, env.<binding> in execute_code"),
  acceptedUrl: z
    .string()
    .describe("once accepted: the URL introduced (its scope may be narrower than asked)"),
  declineReason: z.string().describe("once declined: the person's reason"),
});

/** How `connectionResultText` names the surface's tools. */
export interface ConnectionTextOptions {
  /** The tool that runs snippets: "execute_code" (MCP, the default) or the built-in agent's "executeCode". */
  codeTool?: string;
  /** What to do while the request is pending (default: call again with request_id to keep waiting). */
  whilePending?: (r: ConnectionRequest) => string;
}

/** The result text for the agent: what happened and what to do next. */
export function connectionResultText(r: ConnectionRequest, opts: ConnectionTextOptions = {}): string {
  const codeTool = opts.codeTool ?? "execute_code";
  if (r.state === "accepted")
    return [
      `A person (${r.decidedBy}) accepted connection request ${r.requestId}: ${r.acceptedUrl} is bound as env.${r.binding}.`,
      r.acceptedUrl !== r.url
        ? `Its scope is what they chose, not exactly what you asked for (${r.url}).`
        : "",
      `Your tool list changed: read ${codeTool}'s description again for env.${r.binding}'s methods, then use them in ${codeTool}.`,
    ]
      .filter(Boolean)
      .join("\n");
  if (r.state === "declined")
    return `A person (${r.decidedBy}) declined connection request ${r.requestId} for ${r.url}: ${r.declineReason}\nDo not ask for it again unless the reason says how.`;
  if (opts.whilePending) return opts.whilePending(r);
  return `Connection request ${r.requestId} for ${r.url} is still waiting for a person. Call ${REQUEST_CONNECTION} again with {"request_id": ${r.requestId}} to keep waiting, or go on with other work.`;
}

/** Waits on the request until it is decided (see waitInSlices). @throws the kernel's ServiceError, AbortError. */
function waitForDecision(
  connections: ConnectionsClient,
  request: ConnectionRequest,
  seconds: number,
  extra: ToolExtra,
): Promise<ConnectionRequest> {
  const req = { workspaceId: request.workspaceId, requestId: request.requestId, wait: false };
  return waitInSlices(request, {
    seconds,
    extra,
    now: () => unaryCall(connections, connections.getConnectionRequest, req, 30_000, extra.signal),
    waitUpTo: (ms) =>
      unaryCall(connections, connections.getConnectionRequest, { ...req, wait: true }, ms, extra.signal),
    settled: (r) => r.state !== "pending",
    progress: (r, waited) =>
      `waiting for a person to decide connection request ${r.requestId} (${Math.round(waited)} of ${seconds} s)`,
  });
}

export const requestConnectionTool: AgentTool<typeof input> = {
  name: REQUEST_CONNECTION,
  input,
  output: requestConnectionOutput,
  annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
  async listing() {
    return {
      title: "Ask a person to connect a resource",
      description: [
        CONNECTION_REQUEST_PURPOSE,
        `Waits at most timeout_seconds (default ${DEFAULT_WAIT_SECONDS}, at most ${MAX_WAIT_SECONDS}), sending progress`,
        `notifications every ${SLICE_SECONDS} s when the request has a progressToken. Accepted: the result names the`,
        "binding (env.NAME in execute_code) and the tool list changes (execute_code's description gains its .d.ts).",
        'Still pending: call again with {"request_id": N} to keep waiting.',
      ].join("\n"),
    };
  },
  async call(args, ctx, extra) {
    const problem = connectionArgsProblem(args);
    if (problem) return toolError(problem);
    const byId = args.request_id !== undefined;
    const seconds = args.timeout_seconds ?? DEFAULT_WAIT_SECONDS;
    let request: ConnectionRequest;
    try {
      request = byId
        ? await unaryCall(
            ctx.connections,
            ctx.connections.getConnectionRequest,
            { workspaceId: ctx.workspaceId, requestId: args.request_id as number, wait: false },
            30_000,
            extra.signal,
          )
        : await unaryCall(
            ctx.connections,
            ctx.connections.requestConnection,
            {
              workspaceId: ctx.workspaceId,
              url: args.url as string,
              reason: args.reason as string,
              caller: { kind: "agent", id: ctx.chatId },
            },
            30_000,
            extra.signal,
          );
      request = await waitForDecision(ctx.connections, request, seconds, extra);
    } catch (err) {
      return toolError(kernelErrorText(err, "request_connection"));
    }
    return {
      content: [{ type: "text", text: connectionResultText(request) }],
      structuredContent: {
        requestId: request.requestId,
        state: request.state,
        stillWaiting: request.state === "pending",
        url: request.url,
        binding: request.binding,
        acceptedUrl: request.acceptedUrl,
        declineReason: request.declineReason,
      },
    };
  },
};
