/**
 * The CLI against an installation reached through its gateway alone (an installed chart: the services'
 * gRPC ports are not exposed), chosen by two variables:
 *   GATEHOUSE_GATEWAY_URL  the gateway's address, e.g. http://127.0.0.1:8780 (a port-forward) or the
 *                          installation's public URL
 *   GATEHOUSE_TOKEN        a sign-in token (a static token, or an OIDC access token), sent as
 *                          `Authorization: Bearer <token>`
 * Then `workspace create`, `connect`, `exec`, `approve` and `verify` use the gateway's HTTP API and its
 * MCP endpoint (`execute_code`), acting as the person the token names; the other commands refuse,
 * naming these (they need the services' gRPC: GATEHOUSE_KERNEL_ADDRESS / GATEHOUSE_APPROVAL_ADDRESS).
 */
import type { ActionDetail, WorkspaceSummary } from "@gatehouse/gateway-contract";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/** The commands that work through the gateway (`gatehouse <name>`). */
export const GATEWAY_COMMANDS = ["workspace create", "connect", "exec", "approve", "verify"] as const;

/** Where the gateway is and who the CLI is there. */
export interface GatewayTarget {
  /** Base URL without a trailing slash, e.g. "http://127.0.0.1:8780". */
  url: string;
  token: string;
}

/**
 * The gateway named by GATEHOUSE_GATEWAY_URL and GATEHOUSE_TOKEN, or undefined when the URL is unset
 * (the CLI then dials the services' gRPC).
 * @throws Error when the URL is not http(s) or the token is missing.
 */
export function gatewayTarget(env: NodeJS.ProcessEnv = process.env): GatewayTarget | undefined {
  const raw = env.GATEHOUSE_GATEWAY_URL;
  if (!raw) return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new Error(
      `GATEHOUSE_GATEWAY_URL=${raw} is not a URL: give the gateway's address, e.g. http://127.0.0.1:8780`,
    );
  }
  if (url.protocol !== "http:" && url.protocol !== "https:") {
    throw new Error(`GATEHOUSE_GATEWAY_URL=${raw} must start with http:// or https://`);
  }
  const token = env.GATEHOUSE_TOKEN;
  if (!token) {
    throw new Error(
      "GATEHOUSE_GATEWAY_URL is set but GATEHOUSE_TOKEN is not: set it to your sign-in token (an installed chart's NOTES say how to read the evaluation token)",
    );
  }
  return { url: url.href.replace(/\/+$/, ""), token };
}

/** The refusal of a command the gateway does not serve. */
export function notThroughGateway(command: string): Error {
  return new Error(
    `\`gatehouse ${command}\` talks to the services' gRPC, which the gateway does not expose; through GATEHOUSE_GATEWAY_URL these work: ${GATEWAY_COMMANDS.join(", ")}. ` +
      "Unset GATEHOUSE_GATEWAY_URL and set GATEHOUSE_KERNEL_ADDRESS / GATEHOUSE_APPROVAL_ADDRESS to use it, or use the web app",
  );
}

/**
 * One JSON request to the gateway's HTTP API.
 * @throws Error "gateway: <METHOD> <path>: HTTP <status>: <its message>" when the answer is not 2xx,
 *   or naming the URL when the gateway cannot be reached.
 */
export async function gatewayRequest<T>(
  target: GatewayTarget,
  method: "GET" | "POST",
  path: string,
  body?: unknown,
): Promise<T> {
  let res: Response;
  try {
    res = await fetch(`${target.url}${path}`, {
      method,
      headers: {
        authorization: `Bearer ${target.token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(120_000),
    });
  } catch (err) {
    throw new Error(
      `cannot reach the gateway at ${target.url} (GATEHOUSE_GATEWAY_URL): ${(err as Error).cause ?? (err as Error).message}`,
    );
  }
  const text = await res.text();
  if (!res.ok) {
    let message = text.slice(0, 500);
    try {
      const parsed = JSON.parse(text) as { message?: string; error?: { message?: string } };
      message = parsed.message ?? parsed.error?.message ?? message;
    } catch {}
    throw new Error(`gateway: ${method} ${path}: HTTP ${res.status}: ${message}`);
  }
  return (text ? JSON.parse(text) : undefined) as T;
}

/** `execute_code`'s structured result as the gateway's MCP endpoint returns it (the fields printed). */
export interface GatewayExecution {
  ok: boolean;
  durationMs: number;
  returnValue?: unknown;
  console: { level: string; text: string }[];
  outputTruncated: boolean;
  error?: { name: string; message: string; line: number; column: number };
  observed: { id: number; binding: string; title: string }[];
  submitted: { actionId: number; binding: string; title: string; awaited: boolean }[];
  turnId?: string;
  warnings: string[];
}

/**
 * Runs `code` in `workspace` through the gateway's MCP endpoint (`/mcp?workspace=<id>`, tool
 * `execute_code`), as the person the token names.
 * @param timeoutSeconds the snippet's wall-time limit (the tool's timeout_seconds; undefined = its default).
 * @throws Error with the tool's text when the call itself fails.
 */
export async function gatewayExecute(
  target: GatewayTarget,
  workspace: string,
  code: string,
  timeoutSeconds?: number,
): Promise<GatewayExecution> {
  const transport = new StreamableHTTPClientTransport(
    new URL(`${target.url}/mcp?workspace=${encodeURIComponent(workspace)}`),
    { requestInit: { headers: { authorization: `Bearer ${target.token}` } } },
  );
  const client = new Client({ name: "gatehouse-cli", version: "1" });
  try {
    await client.connect(transport);
    const args: Record<string, unknown> = { code };
    if (timeoutSeconds !== undefined) args.timeout_seconds = timeoutSeconds;
    const result = (await client.callTool({ name: "execute_code", arguments: args }, undefined, {
      timeout: ((timeoutSeconds ?? 10) + 60) * 1000,
    })) as CallToolResult;
    if (!result.structuredContent) {
      const text = result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n");
      throw new Error(`execute_code through the gateway: ${text}`);
    }
    return result.structuredContent as unknown as GatewayExecution;
  } finally {
    await transport.terminateSession().catch(() => {});
    await client.close().catch(() => {});
  }
}

/** Creates a workspace owned by the token's person. */
export function gatewayCreateWorkspace(
  target: GatewayTarget,
  name: string,
  members: string[],
): Promise<WorkspaceSummary> {
  return gatewayRequest<WorkspaceSummary>(target, "POST", "/api/workspaces", { name, members });
}

/** The final states of an action: nothing more happens to it. */
const FINAL = new Set(["applied", "failed", "rejected"]);

/**
 * Approves `ids` in order (each as the token's person), then, unless `wait` is false, polls each action
 * once a second until it is applied, failed or rejected.
 * @param stallMs give up when no followed action changed state for this long.
 * @returns the final (or, without waiting, the approved) record of each action, in the order given.
 * @throws Error naming the action when the gateway refuses an approval, or when nothing changed for stallMs.
 */
export async function gatewayApprove(
  target: GatewayTarget,
  workspace: string,
  ids: number[],
  wait: boolean,
  stallMs: number,
): Promise<ActionDetail["action"][]> {
  const ws = encodeURIComponent(workspace);
  for (const id of ids) {
    await gatewayRequest(target, "POST", `/api/workspaces/${ws}/actions/${id}/approve`, {});
  }
  const read = (id: number) =>
    gatewayRequest<ActionDetail>(target, "GET", `/api/workspaces/${ws}/actions/${id}`).then((d) => d.action);
  let current = await Promise.all(ids.map(read));
  if (!wait) return current;
  let seen = current.map((a) => a.status).join(",");
  let changedAt = Date.now();
  while (!current.every((a) => FINAL.has(a.status))) {
    if (Date.now() - changedAt > stallMs) {
      const open = current.filter((a) => !FINAL.has(a.status)).map((a) => `#${a.id} ${a.status}`);
      throw new Error(
        `nothing changed for ${Math.round(stallMs / 1000)} s (--stall-timeout); still not final: ${open.join(", ")} (the approvals stay recorded)`,
      );
    }
    await new Promise((r) => setTimeout(r, 1000));
    current = await Promise.all(ids.map(read));
    const now = current.map((a) => a.status).join(",");
    if (now !== seen) {
      seen = now;
      changedAt = Date.now();
    }
  }
  return current;
}

/** The ids of the workspace's pending actions (the inbox), in submission order. */
export async function gatewayPendingIds(target: GatewayTarget, workspace: string): Promise<number[]> {
  const inbox = await gatewayRequest<{ workspaces: { id: string; pending: { id: number }[] }[] }>(
    target,
    "GET",
    "/api/inbox",
  );
  const ws = inbox.workspaces.find((w) => w.id === workspace);
  if (!ws)
    throw new Error(`workspace ${workspace} is not in your inbox: check the id, or ask its owner to add you`);
  return ws.pending.map((a) => a.id);
}
