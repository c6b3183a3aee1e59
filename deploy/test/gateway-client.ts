/** A person at the gateway of an installed chart: its HTTP API with a bearer token, and its MCP endpoint. */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/** `execute_code`'s structured result (the fields the tests read). */
export interface Execution {
  ok: boolean;
  durationMs: number;
  returnValue?: unknown;
  error?: { name: string; message: string };
  submitted: { actionId: number; binding: string; title: string }[];
}

/** The gateway at `base` ("http://127.0.0.1:<port>") as the person `token` names. */
export class Gateway {
  constructor(
    readonly base: string,
    private readonly token: string,
  ) {}

  /** A JSON request; @throws Error naming the path, the status and the answer when it is not 2xx. */
  async request<T>(method: "GET" | "POST", path: string, body?: unknown): Promise<T> {
    const res = await fetch(new URL(path, this.base), {
      method,
      headers: {
        authorization: `Bearer ${this.token}`,
        ...(body === undefined ? {} : { "content-type": "application/json" }),
      },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(60_000),
    });
    const text = await res.text();
    if (!res.ok) throw new Error(`${method} ${path} -> HTTP ${res.status}: ${text.slice(0, 500)}`);
    return (text ? JSON.parse(text) : undefined) as T;
  }

  /** Opens an MCP session (one chat) on `workspaceId`; close it when done. */
  async mcp(workspaceId: string): Promise<McpSession> {
    const transport = new StreamableHTTPClientTransport(
      new URL(`/mcp?workspace=${encodeURIComponent(workspaceId)}`, this.base),
      { requestInit: { headers: { authorization: `Bearer ${this.token}` } } },
    );
    const client = new Client({ name: "gatehouse-chart-test", version: "0.1.0" });
    await client.connect(transport);
    return new McpSession(client, transport);
  }
}

/** One MCP session at the gateway. */
export class McpSession {
  constructor(
    private readonly client: Client,
    private readonly transport: StreamableHTTPClientTransport,
  ) {}

  /** Runs `code` through `execute_code`; @throws Error with the tool's text when it is a tool error. */
  async executeCode(code: string): Promise<Execution> {
    const result = (await this.client.callTool({
      name: "execute_code",
      arguments: { code },
    })) as CallToolResult;
    if (result.isError && !result.structuredContent) {
      throw new Error(
        `execute_code: ${result.content.map((c) => (c.type === "text" ? c.text : "")).join("\n")}`,
      );
    }
    return result.structuredContent as unknown as Execution;
  }

  async close(): Promise<void> {
    await this.transport.terminateSession().catch(() => {});
    await this.client.close();
  }
}
