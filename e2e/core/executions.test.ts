/**
 * One execution read back for approvers, over the real dev stack (kernel, sandbox runner, the real
 * memory MCP server, gateway): Kernel.GetExecution answers the snippet as it ran, its console, its
 * outcome and the actions it submitted; a snippet over 256 KiB comes back cut and marked; an unknown
 * execution is NOT_FOUND. GET /api/workspaces/:ws/executions/:id answers the same to whoever reads
 * the workspace (auditors too), 403 to a person who is not a member, 404 naming an unknown execution.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { AgentConfig } from "@gatehouse/agent-core/providers";
import { type FakeOpenAiServer, startFakeOpenAiServer } from "@gatehouse/agent-core/testing";
import type { ApiError, ExecutionView } from "@gatehouse/gateway-contract";
import { waitUntil } from "@gatehouse/service-kit";
import { status } from "@grpc/grpc-js";
import { api } from "../support/gateway-client.ts";
import { DEV_OWNER, type Harness, startHarness, unary } from "../support/harness.ts";

let h: Harness;
let fake: FakeOpenAiServer;
let base: string;
const tokenOf = (subject: string) => h.stack.devTokens.find((t) => t.subject === subject)?.token ?? "";

/** The built-in agent over the fake OpenAI-compatible model (no real model is reachable here). */
function agentConfig(baseUrl: string): AgentConfig {
  return {
    deployment: { provider: "openai-compatible", model: "fake-coder", baseUrl },
    workspaces: new Map(),
    limits: { maxSteps: 3, maxTokens: 100_000, maxResultBytes: 16_384, modelAttempts: 3 },
  };
}

before(async () => {
  fake = await startFakeOpenAiServer();
  h = await startHarness(undefined, { agent: agentConfig(fake.baseUrl) });
  base = h.stack.addresses.gateway;
});
after(async () => {
  await h?.close();
  await fake?.close();
});

const writingSnippet = `export default async (env: any) => {
  console.log("creating Ada — 日本語");
  console.warn("second line");
  return (await env.MEMORY.create_entities({ entities: [{ name: "Ada", entityType: "person", observations: [] }] })).actionId;
};`;

test("GetExecution answers an executed snippet's code, console, outcome and submitted actions", async () => {
  const ws = await h.workspace("mcp://memory");
  const r = await h.exec(ws, writingSnippet);
  assert.equal(r.ok, true, JSON.stringify(r.error));
  const v = await unary(h.kernel, h.kernel.getExecution, { workspaceId: ws, executionId: r.executionId });
  assert.equal(v.executionId, r.executionId);
  assert.equal(v.code, writingSnippet);
  assert.equal(v.codeTruncated, false);
  assert.deepEqual(v.console, ["log: creating Ada — 日本語", "warn: second line"]);
  assert.equal(v.consoleTruncated, false);
  assert.equal(v.ok, true);
  assert.deepEqual(v.bindings, ["MEMORY"]);
  assert.deepEqual(
    v.actionIds.map(Number),
    r.submitted.map((a) => Number(a.actionId)),
  );
  assert.equal(v.actionIds.length, 1);
  assert.ok(!Number.isNaN(Date.parse(v.executedAt)), v.executedAt);
  assert.equal(v.chatMessage, "");
});

test("a snippet over 256 KiB comes back cut to 256 KiB and marked truncated", async () => {
  const ws = await h.workspace();
  const code = `// ${"x".repeat(300 * 1024)}\nexport default () => 1;`;
  const r = await h.exec(ws, code);
  const v = await unary(h.kernel, h.kernel.getExecution, { workspaceId: ws, executionId: r.executionId });
  assert.equal(v.codeTruncated, true);
  assert.equal(Buffer.byteLength(v.code), 256 * 1024);
  assert.ok(code.startsWith(v.code));
});

test("GetExecution of an unknown execution is NOT_FOUND naming it", async () => {
  const ws = await h.workspace();
  await assert.rejects(
    unary(h.kernel, h.kernel.getExecution, { workspaceId: ws, executionId: "no-such-run" }),
    (e: { code: number; details: string }) =>
      e.code === status.NOT_FOUND && e.details.includes("no-such-run"),
  );
});

test("the execution route answers readers of the workspace (auditors too), 403 to others, 404 naming an unknown execution", async () => {
  const ws = await h.workspace("mcp://memory");
  const r = await h.exec(ws, writingSnippet);
  for (const who of ["dev-admin", "dev-approver", "dev-auditor"]) {
    const res = await api<ExecutionView>(
      base,
      tokenOf(who),
      "GET",
      `/api/workspaces/${ws}/executions/${r.executionId}`,
    );
    assert.equal(res.status, 200, `${who}: ${JSON.stringify(res.body)}`);
    assert.deepEqual(Object.keys(res.body).sort(), [
      "actionIds",
      "code",
      "codeTruncated",
      "console",
      "consoleTruncated",
      "durationMs",
      "error",
      "executedAt",
      "executionId",
      "ok",
    ]);
    assert.equal(res.body.code, writingSnippet);
    assert.deepEqual(res.body.console, ["log: creating Ada — 日本語", "warn: second line"]);
    assert.deepEqual(
      res.body.actionIds,
      r.submitted.map((a) => Number(a.actionId)),
    );
  }
  const others = await h.workspaceOf("user:dev-admin");
  const other = await h.exec(others, "export default () => 1;");
  const refused = await api<ApiError>(
    base,
    tokenOf("dev-approver"),
    "GET",
    `/api/workspaces/${others}/executions/${other.executionId}`,
  );
  assert.equal(refused.status, 403, JSON.stringify(refused.body));
  assert.ok(!JSON.stringify(refused.body).includes("export default"));
  const unknown = await api<ApiError>(
    base,
    tokenOf("dev-auditor"),
    "GET",
    `/api/workspaces/${ws}/executions/no-such-run`,
  );
  assert.equal(unknown.status, 404, JSON.stringify(unknown.body));
  assert.match(JSON.stringify(unknown.body), /no-such-run/);
});

test("an agent turn's execution comes back with the chat message that started the turn", async () => {
  const ws = await h.workspace("mcp://memory");
  const message = "Add Grace to memory — ありがとう";
  fake.push(
    {
      kind: "tool_calls",
      calls: [{ name: "executeCode", arguments: JSON.stringify({ code: writingSnippet }) }],
    },
    { kind: "text", text: "Done." },
  );
  await h.stack.agent.startChat({ workspaceId: ws, chatId: "chat-x", person: DEV_OWNER });
  await h.stack.agent.sendMessage({
    workspaceId: ws,
    chatId: "chat-x",
    turnId: "turn-x",
    text: message,
    person: DEV_OWNER,
  });
  await waitUntil(
    "the agent's snippet to run",
    async () => (await h.stack.store.readStream(`workspace-${ws}`)).some((e) => e.type === "CodeExecuted"),
    { timeoutMs: 240_000 },
  );
  const v = await unary(h.kernel, h.kernel.getExecution, { workspaceId: ws, executionId: "turn-x.1.0" });
  assert.equal(v.chatMessage, message);
  assert.equal(v.code, writingSnippet);
  assert.equal(v.actionIds.length, 1);
  const res = await api<ExecutionView>(
    base,
    tokenOf("dev-auditor"),
    "GET",
    `/api/workspaces/${ws}/executions/turn-x.1.0`,
  );
  assert.equal(res.status, 200, JSON.stringify(res.body));
  assert.equal(res.body.chatMessage, message);
});
