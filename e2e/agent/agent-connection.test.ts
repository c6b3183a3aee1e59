/**
 * The built-in agent's second tool, `request_connection`, end to end: the real kernel (its
 * Connections service and the MCP gatekeeper checking the URL), the gateway's connection-request
 * routes a person uses, the sandbox and a real Temporal dev server, with the FAKE OpenAI-compatible
 * model of @gatehouse/agent-core/testing replaying a script (no real model can be reached here).
 * Same set-up as agent-loop.test.ts. Every assertion reads the workspace stream, the gateway, or
 * what the fake model was sent.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, beforeEach, test } from "node:test";
import type { AgentConfig } from "@gatehouse/agent-core/providers";
import { type FakeOpenAiServer, startFakeOpenAiServer } from "@gatehouse/agent-core/testing";
import type { ConnectionDecisionResult, ConnectionRequestsResponse } from "@gatehouse/gateway-contract";
import { waitUntil } from "@gatehouse/service-kit";
import { bundleAgentWorkflows, startAgent } from "@gatehouse/worker";
import { api } from "../support/gateway-client.ts";
import { DEV_OWNER, type Harness, startHarness } from "../support/harness.ts";
import { startWorkerProcess } from "../support/worker-process.ts";

let fake: FakeOpenAiServer;
let h: Harness;

function agentConfig(baseUrl: string): AgentConfig {
  return {
    deployment: { provider: "openai-compatible", model: "fake-coder", baseUrl },
    workspaces: new Map(),
    limits: { maxSteps: 8, maxTokens: 100_000, maxResultBytes: 16_384, modelAttempts: 3 },
  };
}

before(async () => {
  fake = await startFakeOpenAiServer();
  h = await startHarness(undefined, { agent: agentConfig(fake.baseUrl) });
});
after(async () => {
  await h?.close();
  await fake?.close();
});
beforeEach(() => {
  fake?.clear();
});

type Ev = {
  revision: number;
  type: string;
  data: Record<string, unknown>;
  metadata: Record<string, unknown>;
};
const stream = async (ws: string) => (await h.stack.store.readStream(`workspace-${ws}`)) as unknown as Ev[];
const of = (events: Ev[], type: string) => events.filter((e) => e.type === type);
const tokenOf = (subject: string) => h.stack.devTokens.find((t) => t.subject === subject)?.token ?? "";

/** The model's call of request_connection with raw `args` (a JSON text, possibly malformed). */
const ask = (args: string) => ({ name: "request_connection", arguments: args });

/** Sends `text` as turn `turnId` of `chatId` and waits for that turn's end; returns its ChatTurnEnded data. */
async function turn(ws: string, chatId: string, turnId: string, text: string, chats = h.stack.agent) {
  await chats.sendMessage({ workspaceId: ws, chatId, turnId, text, person: DEV_OWNER });
  const ended = await waitUntil(
    `turn ${turnId} to end`,
    async () => of(await stream(ws), "ChatTurnEnded").find((e) => e.data.turnId === turnId),
    { timeoutMs: 240_000 },
  );
  return ended.data;
}

/** The messages the fake model got in request `i`, as one JSON text. */
const sent = (i: number) => JSON.stringify(fake.requests[i]?.body.messages ?? []);

test("the agent asks for a connection (malformed arguments and a refusal are told to it first), a person accepts it on the gateway, and the next turn uses the binding", async () => {
  const ws = await h.workspace();
  const chatId = "chat-connect";
  await h.stack.agent.startChat({ workspaceId: ws, chatId, person: DEV_OWNER });
  const first = fake.requests.length;
  fake.push(
    { kind: "tool_calls", calls: [ask('{"url": "mcp://memory"')] },
    { kind: "tool_calls", calls: [ask('{"url": "mcp://memory"}')] },
    { kind: "tool_calls", calls: [ask('{"url": "mcp://not-registered", "reason": "to read notes"}')] },
    {
      kind: "tool_calls",
      calls: [ask('{"url": "mcp://memory#tool=read_graph", "reason": "to read the team graph"}')],
    },
    { kind: "text", text: "I asked for the memory graph; accept it and I will read it." },
  );
  const ended = await turn(ws, chatId, "turn-1", "Who is in the team graph?");
  assert.equal(ended.reason, "done", JSON.stringify(ended));
  assert.equal(ended.steps, 5);
  assert.equal(fake.remaining(), 0);
  // The model was offered both tools.
  const offered = (fake.requests[first]?.body.tools ?? []) as Array<{ function: { name: string } }>;
  assert.deepEqual(
    offered.map((t) => t.function.name),
    ["executeCode", "request_connection"],
  );

  const events = await stream(ws);
  const calls = of(events, "ChatToolCalled").map((e) => e.data);
  assert.deepEqual(
    calls.map((c) => c.toolName),
    Array(4).fill("request_connection"),
  );
  assert.ok(
    calls.every((c) => !c.executionId),
    "request_connection runs no snippet: no execution id",
  );
  // Malformed arguments: recorded with the problem, nothing sent to the kernel, asked again.
  assert.match(String(calls[0]?.problem), /not valid JSON; call request_connection again/);
  assert.match(String(calls[1]?.problem), /reason is required with url/);
  assert.equal(calls[2]?.problem ?? "", "");
  assert.equal(calls[3]?.problem ?? "", "");
  const results = of(events, "ChatToolResult").map((e) => e.data);
  assert.equal(results.length, 4);
  assert.deepEqual(
    results.map((r) => r.ok ?? false),
    [false, false, false, true],
  );
  assert.match(sent(first + 1), /not valid JSON/);
  assert.match(sent(first + 2), /reason is required with url/);
  // The kernel's refusal (no such MCP server) is told to the model, not recorded as a request.
  assert.match(String(results[2]?.text), /^request_connection failed: .*not-registered/);
  assert.match(sent(first + 3), /not-registered/);
  // The request: recorded by the kernel as the agent of this chat, checked without connecting.
  const requested = of(events, "ConnectionRequested");
  assert.equal(requested.length, 1, "one request: the malformed and refused calls recorded none");
  assert.deepEqual(requested[0]?.metadata.caller, { kind: "agent", id: chatId });
  const requestId = requested[0]?.revision;
  assert.match(
    String(results[3]?.text),
    new RegExp(
      `^Connection request ${requestId} for mcp://memory#tool=read_graph is recorded\\. A person must accept it`,
    ),
  );
  assert.match(sent(first + 4), new RegExp(`Connection request ${requestId} .*must accept it`));
  // Nothing is bound until a person accepts.
  assert.equal(of(events, "ResourceIntroduced").length, 0);

  // A person sees it on the gateway and accepts it.
  const base = h.stack.addresses.gateway;
  const listed = await api<ConnectionRequestsResponse>(
    base,
    tokenOf("dev-approver"),
    "GET",
    `/api/workspaces/${ws}/connection-requests?state=pending`,
  );
  assert.equal(listed.status, 200, JSON.stringify(listed.body));
  assert.deepEqual(
    listed.body.requests.map((r) => [r.id, r.url, r.reason]),
    [[requestId, "mcp://memory#tool=read_graph", "to read the team graph"]],
  );
  const accepted = await api<ConnectionDecisionResult>(
    base,
    tokenOf("dev-approver"),
    "POST",
    `/api/workspaces/${ws}/connection-requests/${requestId}/accept`,
    {},
  );
  assert.equal(accepted.status, 200, JSON.stringify(accepted.body));
  const binding = accepted.body.request.binding;

  // The next turn: the model asks for the request's state, then uses the binding it names.
  const second = fake.requests.length;
  fake.push(
    { kind: "tool_calls", calls: [ask(`{"request_id": ${requestId}}`)] },
    {
      kind: "tool_calls",
      calls: [
        {
          name: "executeCode",
          arguments: JSON.stringify({
            code: `export default async (env: any) => (await env.${binding}.read_graph({})).content.length;`,
          }),
        },
      ],
    },
    { kind: "text", text: "The graph is read." },
  );
  const ended2 = await turn(ws, chatId, "turn-2", "Accepted, go on.");
  assert.equal(ended2.reason, "done", JSON.stringify(ended2));
  assert.match(
    sent(second + 1),
    new RegExp(`accepted connection request ${requestId}: .* is bound as env\\.${binding}`),
  );
  assert.match(sent(second + 1), /read executeCode's description again/);
  // From this turn on the prompt carries the binding's declarations.
  assert.match(JSON.stringify(fake.requests[second]?.body.messages?.[0]), new RegExp(binding));
  const after2 = await stream(ws);
  const ran = of(after2, "CodeExecuted").map((e) => e.data);
  assert.equal(ran.length, 1);
  assert.equal(ran[0]?.executionId, "turn-2.2.0");
  assert.equal(of(after2, "ObservationRecorded").length, 1, "the binding's read was recorded");
  assert.equal(of(after2, "ConnectionRequested").length, 1, "asking by request_id records nothing");
});

test("a worker process started from the pre-built agent workflow bundle (WORKER_AGENT_WORKFLOW_BUNDLE, as the image ships it) runs a turn with request_connection; a bundle path that cannot be read stops it naming the variable", async () => {
  const QUEUE = "gatehouse-agent-bundle-test";
  const bundlePath = join(h.dir, "agent-workflow-bundle.js");
  writeFileSync(bundlePath, (await bundleAgentWorkflows()).code);
  const env = {
    TEMPORAL_ADDRESS: h.stack.addresses.temporal,
    EVENT_STORE_URL: `sqlite:${h.dir}/events.sqlite`,
    GATEKEEPER_ADDRESSES: `mcp=${h.stack.addresses.mcp}`,
    KERNEL_ADDRESS: h.stack.addresses.kernel,
    AGENT_PROVIDER: "openai-compatible",
    AGENT_MODEL: "fake-coder",
    AGENT_BASE_URL: fake.baseUrl,
    AGENT_TASK_QUEUE: QUEUE,
  };
  await assert.rejects(
    startWorkerProcess({ ...env, WORKER_AGENT_WORKFLOW_BUNDLE: join(h.dir, "missing-bundle.js") }),
    /worker exited before ready: .*WORKER_AGENT_WORKFLOW_BUNDLE: ENOENT/s,
  );
  const worker = await startWorkerProcess({ ...env, WORKER_AGENT_WORKFLOW_BUNDLE: bundlePath });
  // Only the chat operations here; the child process runs this queue's worker.
  const starter = await startAgent({
    store: h.stack.store,
    temporal: { address: h.stack.addresses.temporal },
    kernelAddress: h.stack.addresses.kernel,
    config: agentConfig(fake.baseUrl),
    taskQueue: QUEUE,
    runWorker: false,
  });
  try {
    const ws = await h.workspace();
    await starter.chats.startChat({ workspaceId: ws, chatId: "chat-bundle", person: DEV_OWNER });
    fake.push(
      { kind: "tool_calls", calls: [ask('{"url": "mcp://memory", "reason": "to read the graph"}')] },
      { kind: "text", text: "Asked." },
    );
    const ended = await turn(ws, "chat-bundle", "turn-b", "Read the graph.", starter.chats);
    assert.equal(ended.reason, "done", JSON.stringify(ended));
    const events = await stream(ws);
    assert.equal(of(events, "ConnectionRequested").length, 1);
    assert.match(String(of(events, "ChatToolResult")[0]?.data.text), /is recorded\. A person must accept it/);
  } finally {
    await starter.close();
    await worker.kill();
  }
});
