/**
 * The built-in agent's model text streams to browsers: the worker publishes throttled `chat-delta`
 * events on the notice bus while the (FAKE, paced) model writes, and the gateway's GET /api/events
 * forwards them, in order, only to people who reach the chat's workspace. Real stack (kernel,
 * approval, Temporal dev server, gateway, in-process bus), the agent worker in-process; then split
 * mode: the worker as its own process publishing to a real nats-server, a gateway reading from it.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { AgentConfig } from "@gatehouse/agent-core/providers";
import { type FakeOpenAiServer, startFakeOpenAiServer } from "@gatehouse/agent-core/testing";
import { startGateway } from "@gatehouse/gateway";
import type { Chat, ChatDelta, SendMessageResult } from "@gatehouse/gateway-contract";
import { connectNatsNoticeBus } from "@gatehouse/live-notices";
import { startNatsServer } from "@gatehouse/live-notices/nats-server";
import { freePort, waitUntil } from "@gatehouse/service-kit";
import { api, type EventStreamClient, openEvents } from "../support/gateway-client.ts";
import { DEV_OWNER, type Harness, startHarness } from "../support/harness.ts";
import { startWorkerProcess } from "../support/worker-process.ts";

let fake: FakeOpenAiServer;
let h: Harness;

before(async () => {
  fake = await startFakeOpenAiServer();
  const agent: AgentConfig = {
    deployment: { provider: "openai-compatible", model: "fake-coder", baseUrl: fake.baseUrl },
    workspaces: new Map(),
    limits: { maxSteps: 3, maxTokens: 100_000, maxResultBytes: 16_384, modelAttempts: 3 },
  };
  h = await startHarness(undefined, { agent });
});
after(async () => {
  await h?.close();
  await fake?.close();
});

const tokenOf = (subject: string) => h.stack.devTokens.find((t) => t.subject === subject)?.token ?? "";

test("the model's text arrives on /api/events as chat-delta events, in order, that concatenate to the recorded ChatModelMessage text, only for people who reach the workspace", async (t) => {
  // The approver is a member; the auditor is not.
  const ws = await h.workspaceOf(DEV_OWNER, ["user:dev-approver"]);
  const member = await openEvents(h.stack.addresses.gateway, tokenOf("dev-approver"));
  const outsider = await openEvents(h.stack.addresses.gateway, tokenOf("dev-auditor"));
  try {
    await member.waitFor((e) => e.event === "resync");
    await outsider.waitFor((e) => e.event === "resync");
    const text =
      "Here is what I found: the graph holds three people, two of them have open tasks, and nobody has written to it since Monday.";
    // 6 characters every 10 ms: about 21 pieces over 200 ms, more than the 50 ms throttle lets through.
    fake.push({ kind: "text", text, chunkChars: 6, chunkDelayMs: 10 });
    await h.stack.agent.startChat({ workspaceId: ws, chatId: "chat-s", person: DEV_OWNER });
    await h.stack.agent.sendMessage({
      workspaceId: ws,
      chatId: "chat-s",
      turnId: "turn-s",
      text: "What is in the graph?",
      person: DEV_OWNER,
    });
    const ended = await waitUntil(
      "the turn to end",
      async () => (await h.stack.store.readStream(`workspace-${ws}`)).find((e) => e.type === "ChatTurnEnded"),
      { timeoutMs: 240_000 },
    );
    assert.equal((ended.data as { reason: string }).reason, "done", JSON.stringify(ended.data));
    const recorded = (await h.stack.store.readStream(`workspace-${ws}`)).find(
      (e) => e.type === "ChatModelMessage",
    );
    assert.equal((recorded?.data as { text: string } | undefined)?.text, text);
    assert.equal(fake.requests.at(-1)?.body.stream, true, "the model was asked to stream");
    await member.waitFor(
      (e) =>
        e.event === "notice" && (e.data as { type: string; workspaceId: string }).type === "ChatTurnEnded",
      120_000,
    );

    const deltaEvents = member.events.filter((e) => e.event === "chat-delta");
    const deltas = deltaEvents.map((e) => e.data as unknown as ChatDelta);
    t.diagnostic(
      `${deltas.length} chat-delta events for about 21 pieces the model streamed over about 200 ms`,
    );
    assert.ok(deltas.length >= 2, `the text came in ${deltas.length} deltas`);
    assert.ok(deltas.length < 21, `deltas were coalesced (${deltas.length} for about 21 pieces)`);
    assert.deepEqual(
      deltas.map((d) => d.seq),
      deltas.map((_, i) => i),
      "in order, none missing",
    );
    for (const d of deltas)
      assert.deepEqual([d.workspaceId, d.chatId, d.turnId, d.step], [ws, "chat-s", "turn-s", 1]);
    assert.equal(deltas.map((d) => d.text).join(""), text, "the deltas concatenate to the recorded text");
    // Every delta came before the notice of the recorded message that replaces them.
    const noticeAt = member.events.findIndex(
      (e) => e.event === "notice" && (e.data as { type: string }).type === "ChatModelMessage",
    );
    assert.ok(noticeAt > member.events.indexOf(deltaEvents.at(-1) as (typeof member.events)[number]));
    assert.equal(
      outsider.events.filter((e) => e.event === "chat-delta").length,
      0,
      "someone who does not reach the workspace gets no deltas",
    );
  } finally {
    member.close();
    outsider.close();
  }
});

/** The chat-delta events `events` got for `chatId`, in arrival order. */
const deltasOf = (events: EventStreamClient, chatId: string) =>
  events.events
    .filter((e) => e.event === "chat-delta")
    .map((e) => e.data as unknown as ChatDelta)
    .filter((d) => d.chatId === chatId);

test("split mode: a worker process with NATS_URL publishes the deltas to NATS and a gateway on that NATS forwards them", async () => {
  const ws = await h.workspaceOf(DEV_OWNER, ["user:dev-approver"]);
  const nats = await startNatsServer();
  const grpcPort = await freePort();
  const worker = await startWorkerProcess({
    TEMPORAL_ADDRESS: h.stack.addresses.temporal,
    EVENT_STORE_URL: `sqlite:${h.dir}/events.sqlite`,
    GATEKEEPER_ADDRESSES: `mcp=${h.stack.addresses.mcp}`,
    KERNEL_ADDRESS: h.stack.addresses.kernel,
    AGENT_PROVIDER: "openai-compatible",
    AGENT_MODEL: "fake-coder",
    AGENT_BASE_URL: fake.baseUrl,
    // Its own queue: the turn runs in this process, not in the harness's in-process agent worker.
    AGENT_TASK_QUEUE: "gatehouse-agent-stream-split",
    WORKER_GRPC_ADDR: `127.0.0.1:${grpcPort}`,
    NATS_URL: nats.url,
  });
  const bus = await connectNatsNoticeBus({ servers: nats.url, name: "test-gateway" });
  const gw = await startGateway({
    approvalAddress: h.stack.addresses.approval,
    kernelAddress: h.stack.addresses.kernel,
    agentAddress: `127.0.0.1:${grpcPort}`,
    notices: bus,
    devTokens: h.stack.devTokens,
  });
  const member = await openEvents(gw.url, tokenOf("dev-approver"));
  try {
    await member.waitFor((e) => e.event === "resync");
    const text = "Streamed from the worker process, through NATS, to the gateway and on to the browser.";
    fake.push({ kind: "text", text, chunkChars: 5, chunkDelayMs: 10 });
    const owner = tokenOf("dev-admin");
    const started = await api<Chat>(gw.url, owner, "POST", `/api/workspaces/${ws}/chats`, {});
    assert.equal(started.status, 201, JSON.stringify(started.body));
    const chatId = started.body.chatId;
    const sent = await api<SendMessageResult>(
      gw.url,
      owner,
      "POST",
      `/api/workspaces/${ws}/chats/${chatId}/messages`,
      {
        text: "Say it slowly.",
      },
    );
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    const done = () =>
      deltasOf(member, chatId)
        .map((d) => d.text)
        .join("") === text;
    await waitUntil("the deltas to spell the whole text", done, { timeoutMs: 240_000, intervalMs: 50 });
    const deltas = deltasOf(member, chatId);
    assert.ok(deltas.length >= 2, `the text came in ${deltas.length} deltas`);
    assert.deepEqual(
      deltas.map((d) => [d.seq, d.turnId, d.step]),
      deltas.map((_, i) => [i, sent.body.turnId, 1]),
    );
    assert.match(worker.output(), /"streamedText":"to NATS"/, "the worker says where its text goes");
  } finally {
    member.close();
    await gw.close();
    await bus.close();
    await worker.kill();
    await nats.close();
  }
});
