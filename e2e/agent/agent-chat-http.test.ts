/**
 * The built-in agent's chats over HTTP (gateway-contract chats.ts) through a `gatehouse dev` stack:
 * the gateway's chat routes call the AgentChats gRPC service (in-process, as `gatehouse dev` runs
 * it), which drives real turns on the real kernel, gVisor sandbox, MCP gatekeeper (the real memory
 * server), approval service and Temporal dev server. No real model can be reached here, so the
 * model is the FAKE OpenAI-compatible server of @gatehouse/agent-core/testing, replaying a script
 * per test. Every assertion is on what the HTTP API answers (and, for the agent off, on a gateway
 * started without AGENT_ADDRESS and on an AgentChats service with no model). The last test runs the
 * worker as its own process (services/worker/src/main.ts, WORKER_GRPC_ADDR) behind a gateway given
 * its address, as a split deployment does.
 */
import assert from "node:assert/strict";
import { after, before, beforeEach, describe, test } from "node:test";
import type { AgentConfig } from "@gatehouse/agent-core/providers";
import { type FakeOpenAiServer, startFakeOpenAiServer } from "@gatehouse/agent-core/testing";
import { startGateway } from "@gatehouse/gateway";
import type {
  AgentInfo,
  ApiError,
  Chat,
  ChatsResponse,
  ChatToolCallEntry,
  InboxResponse,
  LogNotice,
  SendMessageResult,
} from "@gatehouse/gateway-contract";
import { InProcessNoticeBus } from "@gatehouse/live-notices";
import { freePort, waitUntil } from "@gatehouse/service-kit";
import { agentChats, startAgentChatsServer } from "@gatehouse/worker";
import { api, openEvents } from "../support/gateway-client.ts";
import { type Harness, startHarness } from "../support/harness.ts";
import { startWorkerProcess } from "../support/worker-process.ts";

/** The turn's token budget (AGENT_MAX_TURN_TOKENS): the fake reports 15 tokens per answer unless told. */
const MAX_TOKENS = 1000;
let fake: FakeOpenAiServer;
let h: Harness;
let base: string;
/** Dev tokens: the workspaces' owner (who starts the chats) and a member who is not the chat's starter. */
let owner: string;
let member: string;

function agentConfig(baseUrl: string): AgentConfig {
  return {
    deployment: { provider: "openai-compatible", model: "fake-coder", baseUrl },
    workspaces: new Map(),
    limits: { maxSteps: 5, maxTokens: MAX_TOKENS, maxResultBytes: 16_384, modelAttempts: 2 },
  };
}

function tokenOf(subject: string): string {
  const t = h.stack.devTokens.find((d) => d.subject === subject);
  assert.ok(t, `dev token ${subject}`);
  return t.token;
}

before(async () => {
  fake = await startFakeOpenAiServer();
  h = await startHarness(undefined, { agent: agentConfig(fake.baseUrl) });
  base = h.stack.addresses.gateway;
  owner = tokenOf("dev-admin"); // DEV_OWNER
  member = tokenOf("dev-approver");
});
after(async () => {
  await h?.close();
  await fake?.close();
});
beforeEach(() => {
  fake?.clear();
});

function run(code: string) {
  return { name: "executeCode", arguments: JSON.stringify({ code }) };
}

/** POST …/chats as the owner; the new chat. */
async function startChat(ws: string): Promise<Chat> {
  const res = await api<Chat>(base, owner, "POST", `/api/workspaces/${ws}/chats`, {});
  assert.equal(res.status, 201, JSON.stringify(res.body));
  return res.body;
}

async function getChat(ws: string, chatId: string, token = owner): Promise<Chat> {
  const res = await api<Chat>(base, token, "GET", `/api/workspaces/${ws}/chats/${chatId}`);
  assert.equal(res.status, 200, JSON.stringify(res.body));
  return res.body;
}

async function send(ws: string, chatId: string, text: string, token = owner) {
  return api<SendMessageResult & ApiError>(
    base,
    token,
    "POST",
    `/api/workspaces/${ws}/chats/${chatId}/messages`,
    {
      text,
    },
  );
}

/** Waits (re-reading the chat over HTTP) until `pred` holds for it. */
function chatUntil(ws: string, chatId: string, what: string, pred: (c: Chat) => boolean): Promise<Chat> {
  return waitUntil(
    what,
    async () => {
      const c = await getChat(ws, chatId);
      return pred(c) ? c : undefined;
    },
    { timeoutMs: 240_000, intervalMs: 200 },
  );
}

const turnOf = (c: Chat, turnId: string) => c.turns.find((t) => t.turnId === turnId);

describe("agent chats over HTTP through gatehouse dev, with a FAKE model", () => {
  test("start, send: the snippet reads and submits an awaited write; the chat shows its observation and action ids, the action is the inbox row; a second message is 409 while the turn waits; approving lets the turn finish", async () => {
    const ws = await h.workspace("mcp://memory");
    fake.push(
      {
        kind: "tool_calls",
        calls: [
          run(`export default async (env: any) => {
  const before = (await env.MEMORY.read_graph({})).content.length;
  const w = await env.MEMORY.create_entities({ entities: [{ name: "Ada", entityType: "person", observations: ["x"] }] });
  return { before, actionId: w.actionId };
};`),
        ],
      },
      { kind: "text", text: "Added Ada once a person approved it." },
    );
    const info = await api<AgentInfo>(base, member, "GET", `/api/workspaces/${ws}/agent`);
    assert.deepEqual(info.body, { enabled: true, model: "openai-compatible:fake-coder", reason: "" });

    const live = await openEvents(base, member);
    const chat = await startChat(ws);
    assert.match(chat.chatId, /^[0-9a-f-]{36}$/, "the gateway makes the chat id");
    assert.equal(chat.startedBy, "user:dev-admin");
    assert.equal(chat.model, "openai-compatible:fake-coder");
    assert.equal(chat.workspaceId, ws);
    assert.deepEqual(chat.entries, []);

    const sent = await send(ws, chat.chatId, "  Add Ada to the memory graph.  ");
    assert.equal(sent.status, 202, JSON.stringify(sent.body));
    const { turnId } = sent.body;
    assert.match(turnId, /^[0-9a-f-]{36}$/, "the gateway makes the turn id");

    // The awaited write suspends the turn: the chat shows it waiting on that action.
    const waiting = await chatUntil(ws, chat.chatId, "the turn to wait for a person", (c) =>
      c.turns.some((t) => t.turnId === turnId && t.state === "waiting"),
    );
    const call = waiting.entries.find((e): e is ChatToolCallEntry => e.kind === "tool_call");
    assert.ok(call, JSON.stringify(waiting.entries));
    assert.equal(call.toolName, "executeCode");
    assert.equal(call.executionId, `${turnId}.1.0`);
    assert.equal(call.observationIds.length, 1, "the read is one observation");
    assert.equal(call.actionIds.length, 1, "the write is one action");
    const [actionId] = call.actionIds as [number];
    assert.ok((call.observationIds[0] as number) < actionId, "read before written, by log id");
    assert.ok(call.result, "the tool result is recorded");
    assert.deepEqual(call.result.awaitedActionIds, [actionId]);
    assert.deepEqual(turnOf(waiting, turnId)?.awaiting, [actionId]);
    const user = waiting.entries[0];
    assert.equal(user?.kind, "user");
    assert.equal(user?.kind === "user" ? user.text : "", "Add Ada to the memory graph.", "sent trimmed");

    // The same id is the inbox row people decide on.
    const inbox = await api<InboxResponse>(base, member, "GET", `/api/inbox?workspace=${ws}`);
    assert.equal(inbox.status, 200);
    const row = inbox.body.workspaces.find((w) => w.id === ws)?.pending.find((a) => a.id === actionId);
    assert.ok(row, `action ${actionId} pending in the inbox: ${JSON.stringify(inbox.body)}`);
    assert.equal(row.caller.kind, "agent");
    assert.equal(row.caller.id, chat.chatId);

    // One turn at a time: a second message while this one waits is refused, and records nothing.
    const second = await send(ws, chat.chatId, "And Grace too.");
    assert.equal(second.status, 409);
    assert.equal(second.body.error.code, "turn_in_progress");
    assert.match(second.body.error.message, new RegExp(`turn ${turnId} of this chat has not ended`));

    // The list shows it, titled by its first message.
    const list = await api<ChatsResponse>(base, member, "GET", `/api/workspaces/${ws}/chats`);
    assert.equal(list.status, 200);
    assert.deepEqual(
      list.body.chats.map((c) => [c.chatId, c.title, c.state, c.turns]),
      [[chat.chatId, "Add Ada to the memory graph.", "waiting", 1]],
    );

    const approved = await api(base, member, "POST", `/api/workspaces/${ws}/actions/${actionId}/approve`, {});
    assert.equal(approved.status, 200, JSON.stringify(approved.body));
    const done = await chatUntil(
      ws,
      chat.chatId,
      "the turn to end",
      (c) => turnOf(c, turnId)?.state === "ended",
    );
    const turn = turnOf(done, turnId);
    assert.equal(turn?.reason, "done", JSON.stringify(turn));
    assert.equal(turn?.steps, 2);
    assert.deepEqual(
      done.entries.map((e) => e.kind),
      ["user", "model", "tool_call", "model", "turn_ended"],
    );
    const last = done.entries.at(-2);
    assert.equal(last?.kind === "model" ? last.text : "", "Added Ada once a person approved it.");
    assert.ok(done.revision >= (done.entries.at(-1)?.revision ?? Number.POSITIVE_INFINITY));
    assert.equal(h.memoryState().filter((l) => l.includes('"Ada"')).length, 1, "applied once");
    // Members following GET /api/events get a notice per chat event, the turn's end included.
    const notice = (type: string) => (e: { event: string; data: unknown }) =>
      e.event === "notice" && (e.data as LogNotice).workspaceId === ws && (e.data as LogNotice).type === type;
    try {
      await live.waitFor(notice("ChatTurnEnded"), 60_000);
      for (const type of ["ChatStarted", "ChatUserMessage", "ChatToolResult"])
        assert.ok(live.events.some(notice(type)), `a ${type} notice`);
    } finally {
      live.close();
    }
    assert.equal(fake.remaining(), 0);
  });

  test("cancel over HTTP while the model works ends the turn `cancelled`; cancelling it again is 409 turn_not_open", async () => {
    const ws = await h.workspace("mcp://memory");
    // A slow model: the cancel lands while its first answer is on the way.
    fake.push({ kind: "text", text: "too late", delayMs: 15_000 }, { kind: "text", text: "not asked" });
    const chat = await startChat(ws);
    const sent = await send(ws, chat.chatId, "Think for a while.");
    assert.equal(sent.status, 202);
    const { turnId } = sent.body;
    await waitUntil("the model to be asked", async () => fake.requests.length > 0 && fake.remaining() < 2, {
      timeoutMs: 240_000,
    });
    const other = await api<ApiError>(
      base,
      member,
      "POST",
      `/api/workspaces/${ws}/chats/${chat.chatId}/turns/${turnId}/cancel`,
      {},
    );
    assert.equal(other.status, 403, "only the chat's starter cancels its turns");
    assert.match(other.body.error.message, /belongs to user:dev-admin/);
    const cancel = await api<{ turnId: string }>(
      base,
      owner,
      "POST",
      `/api/workspaces/${ws}/chats/${chat.chatId}/turns/${turnId}/cancel`,
      {},
    );
    assert.equal(cancel.status, 202, JSON.stringify(cancel.body));
    assert.equal(cancel.body.turnId, turnId);
    const ended = await chatUntil(
      ws,
      chat.chatId,
      "the turn to end",
      (c) => turnOf(c, turnId)?.state === "ended",
    );
    const turn = turnOf(ended, turnId);
    assert.equal(turn?.reason, "cancelled", JSON.stringify(turn));
    assert.match(turn?.message ?? "", /cancelled by user:dev-admin/);
    assert.equal(fake.remaining(), 1, "the model was not asked again");
    const again = await api<ApiError>(
      base,
      owner,
      "POST",
      `/api/workspaces/${ws}/chats/${chat.chatId}/turns/${turnId}/cancel`,
      {},
    );
    assert.equal(again.status, 409);
    assert.equal(again.body.error.code, "turn_not_open");
    // The chat takes a message again.
    fake.clear();
    fake.push({ kind: "text", text: "Hello again." });
    const next = await send(ws, chat.chatId, "Hello?");
    assert.equal(next.status, 202, JSON.stringify(next.body));
    await chatUntil(
      ws,
      chat.chatId,
      "the second turn to end",
      (c) => turnOf(c, next.body.turnId)?.state === "ended",
    );
  });

  test("a turn whose provider-reported tokens reach AGENT_MAX_TURN_TOKENS ends with reason token_budget", async () => {
    const ws = await h.workspace("mcp://memory");
    fake.push(
      {
        kind: "tool_calls",
        calls: [run("export default async () => 1;")],
        usage: { promptTokens: MAX_TOKENS, completionTokens: 20 },
      },
      { kind: "text", text: "not asked" },
    );
    const chat = await startChat(ws);
    const { body } = await send(ws, chat.chatId, "Spend a lot.");
    const ended = await chatUntil(
      ws,
      chat.chatId,
      "the turn to end",
      (c) => turnOf(c, body.turnId)?.state === "ended",
    );
    const turn = turnOf(ended, body.turnId);
    assert.equal(turn?.reason, "token_budget", JSON.stringify(turn));
    assert.match(turn?.message ?? "", /AGENT_MAX_TURN_TOKENS/);
    assert.equal(turn?.inputTokens, MAX_TOKENS);
    assert.equal(turn?.outputTokens, 20);
    assert.equal(turn?.steps, 1);
    assert.equal(fake.remaining(), 1, "no second model call past the budget");
  });

  test("bad input: empty text 400, unknown chat 404, another person's chat 403, malformed ids 400 — nothing recorded", async () => {
    const ws = await h.workspace();
    const chat = await startChat(ws);
    const revision = await h.stack.store.streamRevision(`workspace-${ws}`);

    const empty = await send(ws, chat.chatId, "   ");
    assert.equal(empty.status, 400);
    assert.equal(empty.body.error.code, "invalid_argument");
    assert.match(empty.body.error.message, /text must not be empty/);
    const noBody = await api<ApiError>(
      base,
      owner,
      "POST",
      `/api/workspaces/${ws}/chats/${chat.chatId}/messages`,
      {
        message: "hi",
      },
    );
    assert.equal(noBody.status, 400);
    assert.match(noBody.body.error.message, /text/);
    const extra = await api<ApiError>(base, owner, "POST", `/api/workspaces/${ws}/chats`, { model: "x" });
    assert.equal(extra.status, 400);

    const unknown = await api<ApiError>(base, owner, "GET", `/api/workspaces/${ws}/chats/no-such-chat`);
    assert.equal(unknown.status, 404);
    assert.match(unknown.body.error.message, /chat "no-such-chat" does not exist/);
    const unknownSend = await send(ws, "no-such-chat", "hi");
    assert.equal(unknownSend.status, 404);

    const bad = await api<ApiError>(base, owner, "GET", `/api/workspaces/${ws}/chats/bad%20id`);
    assert.equal(bad.status, 400);
    assert.match(bad.body.error.message, /chat id/);

    const notTheirs = await send(ws, chat.chatId, "hi", member);
    assert.equal(notTheirs.status, 403);
    assert.equal(notTheirs.body.error.code, "forbidden");
    assert.match(notTheirs.body.error.message, /belongs to user:dev-admin; only they send messages/);
    // A member who did not start it still reads it.
    assert.equal((await getChat(ws, chat.chatId, member)).chatId, chat.chatId);

    const unknownTurn = await api<ApiError>(
      base,
      owner,
      "POST",
      `/api/workspaces/${ws}/chats/${chat.chatId}/turns/no-such-turn/cancel`,
      {},
    );
    assert.equal(unknownTurn.status, 409);
    assert.equal(unknownTurn.body.error.code, "turn_not_open");

    assert.equal(await h.stack.store.streamRevision(`workspace-${ws}`), revision, "nothing was recorded");
  });
});

describe("the agent off", () => {
  /** A gateway on the harness's services; `agentAddress` absent = AGENT_ADDRESS unset. */
  async function gatewayWith(agentAddress?: string) {
    const notices = new InProcessNoticeBus();
    const gw = await startGateway({
      approvalAddress: h.stack.addresses.approval,
      kernelAddress: h.stack.addresses.kernel,
      ...(agentAddress ? { agentAddress } : {}),
      notices,
      devTokens: h.stack.devTokens,
    });
    return {
      url: gw.url,
      async close() {
        await gw.close();
        await notices.close();
      },
    };
  }

  test("a gateway without AGENT_ADDRESS: every chat route is 503 agent_off naming AGENT_ADDRESS; GET …/agent says why", async () => {
    const ws = await h.workspace();
    const gw = await gatewayWith(undefined);
    try {
      for (const [method, path] of [
        ["POST", `/api/workspaces/${ws}/chats`],
        ["GET", `/api/workspaces/${ws}/chats`],
        ["GET", `/api/workspaces/${ws}/chats/c1`],
        ["POST", `/api/workspaces/${ws}/chats/c1/messages`],
        ["POST", `/api/workspaces/${ws}/chats/c1/turns/t1/cancel`],
      ] as const) {
        const res = await api<ApiError>(
          gw.url,
          owner,
          method,
          path,
          method === "POST" ? (path.endsWith("messages") ? { text: "hi" } : {}) : undefined,
        );
        assert.equal(res.status, 503, `${method} ${path}: ${JSON.stringify(res.body)}`);
        assert.equal(res.body.error.code, "agent_off");
        assert.match(res.body.error.message, /AGENT_ADDRESS is not set/);
      }
      const info = await api<AgentInfo>(gw.url, owner, "GET", `/api/workspaces/${ws}/agent`);
      assert.equal(info.status, 200);
      assert.equal(info.body.enabled, false);
      assert.match(info.body.reason, /AGENT_ADDRESS/);
    } finally {
      await gw.close();
    }
  });

  test("a worker with no model: writes are 503 agent_off naming AGENT_PROVIDER and AGENT_MODEL, reads of existing chats still work", async () => {
    const ws = await h.workspace();
    const chat = await startChat(ws); // through the stack whose agent is on
    const server = await startAgentChatsServer({
      chats: agentChats({ store: h.stack.store, client: undefined, config: undefined }),
    });
    const gw = await gatewayWith(server.address);
    try {
      const start = await api<ApiError>(gw.url, owner, "POST", `/api/workspaces/${ws}/chats`, {});
      assert.equal(start.status, 503);
      assert.equal(start.body.error.code, "agent_off");
      assert.match(start.body.error.message, /AGENT_PROVIDER and AGENT_MODEL/);
      const sent = await api<ApiError>(
        gw.url,
        owner,
        "POST",
        `/api/workspaces/${ws}/chats/${chat.chatId}/messages`,
        {
          text: "hi",
        },
      );
      assert.equal(sent.status, 503);
      assert.equal(sent.body.error.code, "agent_off");
      const info = await api<AgentInfo>(gw.url, owner, "GET", `/api/workspaces/${ws}/agent`);
      assert.equal(info.body.enabled, false);
      assert.match(info.body.reason, /AGENT_PROVIDER and AGENT_MODEL/);
      const read = await api<Chat>(gw.url, member, "GET", `/api/workspaces/${ws}/chats/${chat.chatId}`);
      assert.equal(read.status, 200);
      assert.equal(read.body.chatId, chat.chatId);
      const list = await api<ChatsResponse>(gw.url, member, "GET", `/api/workspaces/${ws}/chats`);
      assert.deepEqual(
        list.body.chats.map((c) => [c.chatId, c.state]),
        [[chat.chatId, null]],
      );
    } finally {
      await gw.close();
      await server.close();
    }
  });
});

describe("split mode: the worker process serves AgentChats on WORKER_GRPC_ADDR", () => {
  test("a gateway whose AGENT_ADDRESS is the worker process's runs a turn over HTTP, and the worker's /metrics counts the calls", async () => {
    const ws = await h.workspace("mcp://memory");
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
      AGENT_TASK_QUEUE: "gatehouse-agent-split-test",
      WORKER_GRPC_ADDR: `127.0.0.1:${grpcPort}`,
    });
    const notices = new InProcessNoticeBus();
    const gw = await startGateway({
      approvalAddress: h.stack.addresses.approval,
      kernelAddress: h.stack.addresses.kernel,
      agentAddress: `127.0.0.1:${grpcPort}`,
      notices,
      devTokens: h.stack.devTokens,
    });
    try {
      fake.push({ kind: "text", text: "Hello from the worker process." });
      const info = await api<AgentInfo>(gw.url, owner, "GET", `/api/workspaces/${ws}/agent`);
      assert.deepEqual(info.body, { enabled: true, model: "openai-compatible:fake-coder", reason: "" });
      const started = await api<Chat>(gw.url, owner, "POST", `/api/workspaces/${ws}/chats`, {});
      assert.equal(started.status, 201, JSON.stringify(started.body));
      const chatId = started.body.chatId;
      const sent = await api<SendMessageResult>(
        gw.url,
        owner,
        "POST",
        `/api/workspaces/${ws}/chats/${chatId}/messages`,
        {
          text: "Say hello.",
        },
      );
      assert.equal(sent.status, 202, JSON.stringify(sent.body));
      const ended = await waitUntil(
        "the turn to end",
        async () => {
          const c = await api<Chat>(gw.url, member, "GET", `/api/workspaces/${ws}/chats/${chatId}`);
          return turnOf(c.body, sent.body.turnId)?.state === "ended" ? c.body : undefined;
        },
        { timeoutMs: 240_000, intervalMs: 200 },
      );
      assert.equal(turnOf(ended, sent.body.turnId)?.reason, "done");
      const answer = ended.entries.find((e) => e.kind === "model");
      assert.equal(answer?.kind === "model" ? answer.text : "", "Hello from the worker process.");
      const metricsPort = /"metricsPort":(\d+)/.exec(worker.output())?.[1];
      assert.ok(metricsPort, worker.output());
      const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
      assert.match(metrics, /gatehouse_worker_agent_rpc_seconds_count\{method="SendMessage",code="OK"\} 1/);
      assert.match(metrics, /gatehouse_worker_agent_rpc_seconds_count\{method="StartChat",code="OK"\} 1/);
    } finally {
      await gw.close();
      await notices.close();
      await worker.kill();
    }
  });
});
