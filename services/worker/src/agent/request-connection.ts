/**
 * `request_connection` in the built-in agent: the model asks a person to introduce a resource the
 * workspace lacks, through the kernel's Connections service, the same RPC and the same argument
 * schema as the MCP tool (@gatehouse/agent-mcp). Unlike the MCP tool it does not wait for the
 * decision: the request is recorded, the model is told its id and that a person must accept it, and
 * the turn goes on (or ends). Once accepted, the binding is in `env` from the next model step on
 * (the prompt's `.d.ts` is read at every step); `{"request_id": N}` tells the model a request's state.
 */
import {
  CONNECTION_REQUEST_PURPOSE,
  type ConnectionRequestArgs,
  connectionArgsProblem,
  connectionRequestArgs,
  connectionResultText,
  kernelErrorText,
  REQUEST_CONNECTION,
} from "@gatehouse/agent-mcp";
import type { ConnectionRequest, ConnectionsClient } from "@gatehouse/proto";
import { callUnary } from "@gatehouse/service-kit";
import { status } from "@grpc/grpc-js";
import { z } from "zod";

export { REQUEST_CONNECTION };

/** Deadline of one Connections call, ms (the kernel's gatekeeper checks the URL without connecting). */
const CALL_MS = 30_000;

/**
 * request_connection's JSON Schema as the model sees it: the MCP tool's arguments less its wait, and
 * without the `$schema` dialect line, which some providers' tool schemas refuse.
 */
export const requestConnectionInputSchema: Record<string, unknown> = (() => {
  const { $schema: _dialect, ...schema } = z.toJSONSchema(connectionRequestArgs, { io: "input" });
  return schema;
})();

/** request_connection's description for the built-in agent; `codeTool` is the snippet tool's name. */
export function requestConnectionToolDescription(codeTool: string): string {
  return [
    CONNECTION_REQUEST_PURPOSE,
    "This tool does not wait: it returns the request's id at once, and the resource cannot be used until a person",
    `accepts it. Once accepted it is env.NAME in ${codeTool} (its declarations appear in ${codeTool}'s description);`,
    '{"request_id": N} tells you whether request N was accepted or declined.',
  ].join("\n");
}

/** A checked call: the arguments to send, or the problem to tell the model. */
export type CheckedConnectionCall =
  | { args: ConnectionRequestArgs; problem: "" }
  | { args: undefined; problem: string };

const SHAPE = `{"url": "mcp://files#tool=read_text_file", "reason": "why you need it"} or {"request_id": 7}`;

/** Checks request_connection's raw `argumentsJson` (JSON, field types, which fields go together). Pure. */
export function checkConnectionCall(argumentsJson: string): CheckedConnectionCall {
  let raw: unknown;
  try {
    raw = JSON.parse(argumentsJson);
  } catch {
    return {
      args: undefined,
      problem: `The arguments are not valid JSON; call ${REQUEST_CONNECTION} again with ${SHAPE}.`,
    };
  }
  const parsed = connectionRequestArgs.safeParse(raw);
  if (!parsed.success)
    return {
      args: undefined,
      problem: `Invalid arguments for ${REQUEST_CONNECTION}: ${z.prettifyError(parsed.error)}\nCall it again with ${SHAPE}.`,
    };
  const problem = connectionArgsProblem(parsed.data);
  if (problem) return { args: undefined, problem: `${problem}. Call ${REQUEST_CONNECTION} again.` };
  return { args: parsed.data, problem: "" };
}

/** gRPC codes that are the kernel refusing this request (told to the model), not a failure to retry. */
const REFUSALS: readonly number[] = [
  status.INVALID_ARGUMENT,
  status.NOT_FOUND,
  status.FAILED_PRECONDITION,
  status.ALREADY_EXISTS,
  status.PERMISSION_DENIED,
];

/** The text the model gets while a request waits for a person. */
function pendingText(r: ConnectionRequest): string {
  return [
    `Connection request ${r.requestId} for ${r.url} is recorded. A person must accept it in the approver's inbox`,
    "before anything is connected (they may narrow it or decline); it cannot be used until then. Go on with what you",
    "can do without it, or end your answer telling the person what you asked for and why.",
    `Call ${REQUEST_CONNECTION} with {"request_id": ${r.requestId}} to learn its state later.`,
  ].join("\n");
}

/** What one request_connection call gave the model. */
export interface ConnectionCallResult {
  /** False when the kernel refused it (an unknown server, a URL already bound, no such request id). */
  ok: boolean;
  text: string;
  /** The request's id, 0 when refused. */
  requestId: number;
}

/**
 * Records a new request (`url`, `reason`) as the agent `{kind: "agent", id: chatId}`, or reads
 * request `request_id`, and says what happened in the words the model gets. A repeat of the same
 * URL by the same chat while it waits returns the same request (the kernel's rule), so a retried
 * activity records no second one.
 * @throws the kernel's ServiceError when it is unreachable, slow or failing (the activity retries);
 *   its refusals are returned with ok=false instead.
 */
export async function runConnectionCall(
  connections: ConnectionsClient,
  workspaceId: string,
  chatId: string,
  args: ConnectionRequestArgs,
  codeTool: string,
): Promise<ConnectionCallResult> {
  let request: ConnectionRequest;
  try {
    request =
      args.request_id !== undefined
        ? await callUnary(
            connections,
            connections.getConnectionRequest,
            { workspaceId, requestId: args.request_id, wait: false },
            CALL_MS,
          )
        : await callUnary(
            connections,
            connections.requestConnection,
            {
              workspaceId,
              url: args.url ?? "",
              reason: args.reason ?? "",
              caller: { kind: "agent", id: chatId },
            },
            CALL_MS,
          );
  } catch (err) {
    const code = (err as { code?: number }).code;
    if (code === undefined || !REFUSALS.includes(code)) throw err;
    return { ok: false, text: kernelErrorText(err, REQUEST_CONNECTION), requestId: 0 };
  }
  return {
    ok: true,
    text: connectionResultText(request, { codeTool, whilePending: pendingText }),
    requestId: request.requestId,
  };
}
