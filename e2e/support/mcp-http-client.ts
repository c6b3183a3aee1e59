/** The MCP SDK's own client over Streamable HTTP to the gateway's `/mcp`, for the cross-service tests. */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";

/** A connected client and its transport. */
export interface McpHttp {
  client: Client;
  transport: StreamableHTTPClientTransport;
  /** The session id the gateway gave (also the chat id the kernel stamps). */
  sessionId: string;
  /** Ends the session (DELETE) and closes the client. */
  close(): Promise<void>;
}

/** The endpoint URL of `workspaceId` at `gateway` ("http://127.0.0.1:<port>"). */
export const mcpUrl = (gateway: string, workspaceId: string) =>
  new URL(`/mcp?workspace=${encodeURIComponent(workspaceId)}`, gateway);

/**
 * Opens an MCP session on `workspaceId` as the person `token` names (no Authorization header when
 * undefined). @throws the SDK's StreamableHTTPError (its `code` is the HTTP status) when refused.
 */
export async function connectMcpHttp(
  gateway: string,
  workspaceId: string,
  token: string | undefined,
): Promise<McpHttp> {
  const transport = new StreamableHTTPClientTransport(mcpUrl(gateway, workspaceId), {
    requestInit: { headers: token === undefined ? {} : { authorization: `Bearer ${token}` } },
  });
  const client = new Client({ name: "gatehouse-test", version: "0.1.0" });
  await client.connect(transport);
  return {
    client,
    transport,
    sessionId: transport.sessionId ?? "",
    async close() {
      await transport.terminateSession().catch(() => {});
      await client.close();
    },
  };
}

/** A tool result's text blocks, joined. */
export function textOf(result: unknown): string {
  return ((result as CallToolResult).content ?? []).map((c) => (c.type === "text" ? c.text : "")).join("\n");
}

/** A tool result's structured content. */
export function structuredOf<T>(result: unknown): T {
  return (result as CallToolResult).structuredContent as T;
}
