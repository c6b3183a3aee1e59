/**
 * `request_connection` driven by the MCP SDK's own Client over stdio (`gatehouse mcp`), against the
 * real services and the real filesystem MCP server: the agent asks, a person accepts through the
 * gateway with a narrower fragment, the tool returns the binding (and list_changed arrives), and the
 * next execute_code uses it; a request still pending is waited on again by id, then declined; and
 * the same over the gateway's Streamable HTTP `/mcp`.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { ConnectionDecisionResult } from "@gatehouse/gateway-contract";
import { ConnectionsClient } from "@gatehouse/proto";
import { waitUntil } from "@gatehouse/service-kit";
import { credentials } from "@grpc/grpc-js";
import { api } from "../support/gateway-client.ts";
import { type Harness, startHarness, unary } from "../support/harness.ts";
import { connectMcpHttp, structuredOf, textOf } from "../support/mcp-http-client.ts";
import { connectStdio, type StdioSession } from "../support/mcp-stdio-client.ts";

let h: Harness;
let connections: ConnectionsClient;
const sessions: StdioSession[] = [];
const tokenOf = (subject: string) => h.stack.devTokens.find((t) => t.subject === subject)?.token ?? "";

before(async () => {
  h = await startHarness();
  connections = new ConnectionsClient(h.stack.addresses.kernel, credentials.createInsecure());
});
after(async () => {
  await Promise.all(sessions.map((s) => s.close().catch(() => undefined)));
  connections?.close();
  await h?.close();
});

async function session(ws: string): Promise<StdioSession> {
  const s = await connectStdio(h, ws);
  sessions.push(s);
  return s;
}

type ToolResult = {
  content: { type: string; text?: string }[];
  structuredContent?: Record<string, unknown>;
  isError?: boolean;
};
const text = (r: ToolResult) => r.content.map((c) => c.text ?? "").join("\n");

function callTool(s: StdioSession, name: string, args: Record<string, unknown>, onprogress?: () => void) {
  return s.client.callTool({ name, arguments: args }, undefined, {
    timeout: 180_000,
    ...(onprogress ? { onprogress } : {}),
  }) as Promise<ToolResult>;
}

const pendingOf = async (ws: string) =>
  (await unary(connections, connections.listConnectionRequests, { workspaceId: ws, state: "pending" }))
    .requests;

test("request_connection: a person accepts with a narrower fragment; the tool returns the binding, list_changed arrives, and the next execute_code uses it", async () => {
  const ws = await h.workspace();
  writeFileSync(join(h.dir, "files", "spec.md"), "# the spec\n");
  const s = await session(ws);
  const { tools } = await s.client.listTools();
  const tool = tools.find((t) => t.name === "request_connection");
  assert.ok(tool, "request_connection is listed");
  assert.ok(tool.outputSchema, "it declares its structured content");

  let progress = 0;
  const asked = callTool(
    s,
    "request_connection",
    {
      url: "mcp://files#tool=read_text_file&tool=write_file",
      reason: "to read the spec",
      timeout_seconds: 120,
    },
    () => progress++,
  );
  const [request] = await waitUntil("the agent's connection request", async () => {
    const pending = await pendingOf(ws);
    return pending.length > 0 ? pending : undefined;
  });
  assert.deepEqual(request?.caller, { kind: "agent", id: s.chatId }, "stamped with the session's chat");
  await waitUntil("a progress notification", () => progress > 0);
  const accepted = await api<ConnectionDecisionResult>(
    h.stack.addresses.gateway,
    tokenOf("dev-approver"),
    "POST",
    `/api/workspaces/${ws}/connection-requests/${request?.requestId}/accept`,
    { url: "mcp://files#tool=read_text_file" },
  );
  assert.equal(accepted.status, 200, JSON.stringify(accepted.body));

  const r = await asked;
  assert.ok(!r.isError, text(r));
  assert.deepEqual(r.structuredContent, {
    requestId: request?.requestId,
    state: "accepted",
    stillWaiting: false,
    url: "mcp://files#tool=read_text_file&tool=write_file",
    binding: "FILES",
    acceptedUrl: "mcp://files#tool=read_text_file",
    declineReason: "",
  });
  assert.match(text(r), /bound as env\.FILES/);
  assert.match(text(r), /not exactly what you asked for/);
  await waitUntil("notifications/tools/list_changed", () => s.listChanged() > 0);
  const listed = await s.client.listTools();
  assert.match(listed.tools.find((t) => t.name === "execute_code")?.description ?? "", /read_text_file/);

  const read = await callTool(s, "execute_code", {
    code: `export default async (env: any) => {
      const r = await env.FILES.read_text_file({ path: ${JSON.stringify(join(h.dir, "files", "spec.md"))} });
      return r.content[0].text;
    }`,
    timeout_seconds: 120,
  });
  assert.ok(!read.isError, text(read));
  assert.equal((read.structuredContent as { returnValue?: unknown }).returnValue, "# the spec\n");
});

test("request_connection still pending returns the request id; called again with it, it reports the decline and its reason; bad input is a tool error", async () => {
  const ws = await h.workspace();
  const s = await session(ws);
  const first = await callTool(s, "request_connection", {
    url: "mcp://memory",
    reason: "to remember the plan",
    timeout_seconds: 1,
  });
  assert.ok(!first.isError, text(first));
  const id = first.structuredContent?.requestId as number;
  assert.deepEqual(
    [first.structuredContent?.state, first.structuredContent?.stillWaiting],
    ["pending", true],
  );
  assert.match(text(first), new RegExp(`\\{"request_id": ${id}\\}`));

  const again = callTool(s, "request_connection", { request_id: id, timeout_seconds: 120 });
  await unary(connections, connections.decideConnectionRequest, {
    workspaceId: ws,
    requestId: id,
    accept: false,
    url: "",
    name: "",
    decidedBy: "user:ann",
    reason: "memory is not for this project",
  });
  const declined = await again;
  assert.deepEqual(
    [declined.structuredContent?.state, declined.structuredContent?.declineReason],
    ["declined", "memory is not for this project"],
  );
  assert.match(text(declined), /declined connection request .*: memory is not for this project/);

  const both = await callTool(s, "request_connection", { url: "mcp://files", reason: "x", request_id: id });
  assert.equal(both.isError, true);
  assert.match(text(both), /either url and reason .* or request_id/);
  const badFragment = await callTool(s, "request_connection", { url: "mcp://files#colour=red", reason: "x" });
  assert.equal(badFragment.isError, true);
  assert.match(text(badFragment), /request_connection failed: .*colour/);
  const unknown = await callTool(s, "request_connection", { request_id: 999_999 });
  assert.equal(unknown.isError, true);
  assert.match(text(unknown), /has no connection request 999999/);
  assert.deepEqual(await pendingOf(ws), [], "refused requests record nothing");
});

test("request_connection over the gateway's Streamable HTTP /mcp: the request carries the session's chat id, and the tool reports a person's decision", async () => {
  const ws = await h.workspace();
  const mcp = await connectMcpHttp(h.stack.addresses.gateway, ws, tokenOf("dev-approver"));
  try {
    const first = await mcp.client.callTool(
      {
        name: "request_connection",
        arguments: { url: "mcp://files", reason: "to read", timeout_seconds: 1 },
      },
      undefined,
      { timeout: 120_000 },
    );
    const { requestId, state } = structuredOf<{ requestId: number; state: string }>(first);
    assert.equal(state, "pending", textOf(first));
    const [request] = await pendingOf(ws);
    assert.deepEqual(request?.caller, { kind: "agent", id: mcp.sessionId });
    const again = mcp.client.callTool(
      { name: "request_connection", arguments: { request_id: requestId, timeout_seconds: 120 } },
      undefined,
      { timeout: 180_000 },
    );
    const declined = await api(
      h.stack.addresses.gateway,
      tokenOf("dev-admin"),
      "POST",
      `/api/workspaces/${ws}/connection-requests/${requestId}/decline`,
      { reason: "use the copy in the wiki" },
    );
    assert.equal(declined.status, 200);
    const r = await again;
    assert.deepEqual(structuredOf<{ state: string; declineReason: string }>(r).state, "declined");
    assert.match(textOf(r), /declined connection request .*: use the copy in the wiki/);
  } finally {
    await mcp.close();
  }
});
