/**
 * The built-in agent loop end to end: the real kernel, sandbox, MCP gatekeeper (the real memory
 * server), approval service and a real Temporal dev server, with the agent worker in-process (and,
 * for the crash test, as its own process: services/worker/src/main.ts). No real model can be
 * reached here, so the model is the FAKE OpenAI-compatible server of @gatehouse/agent-core/testing,
 * replaying a script per test. Every assertion reads the workspace stream (chat events, the
 * executions, observations and actions they caused) or what the fake received.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, beforeEach, describe, test } from "node:test";
import type { AgentConfig } from "@gatehouse/agent-core/providers";
import { type FakeOpenAiServer, startFakeOpenAiServer } from "@gatehouse/agent-core/testing";
import { waitUntil } from "@gatehouse/service-kit";
import { type AgentChats, AgentOff, agentChats, startAgent } from "@gatehouse/worker";
import { git, makeBareRepo } from "../support/git-repo.ts";
import { DEV_OWNER, type Harness, startHarness, unary } from "../support/harness.ts";
import { startWorkerProcess } from "../support/worker-process.ts";

const MAX_STEPS = 5;
let fake: FakeOpenAiServer;
let h: Harness;
let n = 0;

function agentConfig(baseUrl: string): AgentConfig {
  return {
    deployment: { provider: "openai-compatible", model: "fake-coder", baseUrl },
    workspaces: new Map(),
    limits: { maxSteps: MAX_STEPS, maxTokens: 100_000, maxResultBytes: 16_384, modelAttempts: 3 },
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

/** The tool call the model makes to run `code`. */
function run(code: string) {
  return { name: "executeCode", arguments: JSON.stringify({ code }) };
}

type Ev = { revision: number; type: string; data: Record<string, unknown> };

async function stream(ws: string): Promise<Ev[]> {
  return (await h.stack.store.readStream(`workspace-${ws}`)) as unknown as Ev[];
}

/** Starts a chat in a new memory workspace, sends `text`, waits for the turn's end; returns the stream. */
async function turn(
  text: string,
  chats: AgentChats = h.stack.agent,
  onRunning?: (ws: string) => Promise<void>,
  urls: string[] = ["mcp://memory"],
) {
  const ws = await h.workspace(...urls);
  const chatId = `chat-${++n}`;
  const turnId = `turn-${n}`;
  await chats.startChat({ workspaceId: ws, chatId, person: DEV_OWNER });
  await chats.sendMessage({ workspaceId: ws, chatId, turnId, text, person: DEV_OWNER });
  await onRunning?.(ws);
  const ended = await waitUntil(
    `turn ${turnId} to end`,
    async () => (await stream(ws)).find((e) => e.type === "ChatTurnEnded"),
    { timeoutMs: 240_000 },
  );
  return { ws, chatId, turnId, ended: ended.data, events: await stream(ws) };
}

const of = (events: Ev[], type: string) => events.filter((e) => e.type === type);

// Each test scripts its own answers: drop what an earlier failed test left unanswered.
beforeEach(() => {
  fake?.clear();
});

/** The text of every message the fake received in request `i`. */
function sent(i: number): string {
  return JSON.stringify(fake.requests[i]?.body.messages ?? []);
}

describe("the agent loop through the real stack with a FAKE model", () => {
  test("a turn reads, writes (simulated: it goes on; awaited: it waits for a person, then resumes), throws (the error and its line go back), then answers", async () => {
    const bare = makeBareRepo(h.dir, join(h.dir, "repos", "agent-loop.git"), { "docs/readme.md": "hello\n" });
    const first = fake.requests.length;
    fake.push(
      {
        kind: "tool_calls",
        calls: [
          run(`export default async (env: any) => ({
  entities: (await env.MEMORY.read_graph({})).content.length,
  readme: await env.REPO.readFile({ path: "docs/readme.md" }),
});`),
        ],
      },
      {
        kind: "tool_calls",
        calls: [
          run(`export default async (env: any) =>
  (await env.REPO.commit({ branch: "main", message: "notes", changes: [{ path: "docs/notes.md", content: "n\\n" }] })).id;`),
        ],
      },
      {
        kind: "tool_calls",
        calls: [
          run(`export default async (env: any) =>
  (await env.MEMORY.create_entities({ entities: [{ name: "Grace", entityType: "person", observations: ["y"] }] })).actionId;`),
        ],
      },
      {
        kind: "tool_calls",
        calls: [run(`export default async () => {\n  const x = 1;\n  throw new Error("boom at three");\n};`)],
      },
      {
        kind: "text",
        text: "Read both, committed notes (simulated), Grace was approved; the last snippet failed.",
      },
    );
    let waited = false;
    const t = await turn(
      "Look at the memory graph and the repo, add notes and Grace.",
      h.stack.agent,
      async (ws) => {
        // The awaited write suspends the turn: nothing more happens until a person decides.
        const suspended: Ev = await waitUntil(
          "the turn's tool result naming the awaited write",
          async () =>
            of(await stream(ws), "ChatToolResult").find(
              (e) => ((e.data.awaitedActionIds as unknown[]) ?? []).length > 0,
            ),
          { timeoutMs: 240_000 },
        );
        const [actionId] = suspended.data.awaitedActionIds as Array<number | string>;
        assert.equal(fake.requests.length - first, 3, "no model call while the turn waits");
        assert.ok(!h.memoryState().some((l) => l.includes('"Grace"')), "the write waits for a person");
        waited = true;
        await unary(h.decisions, h.decisions.approve, {
          workspaceId: ws,
          actionId: Number(actionId),
          decidedBy: "user:dev-approver",
          includeDependencies: false,
          descriptionDigests: {},
        });
      },
      ["mcp://memory", `git+file://${bare}`],
    );
    assert.ok(waited);
    assert.equal(t.ended.reason, "done", JSON.stringify(t.ended));
    assert.equal(t.ended.steps, 5);
    assert.equal(fake.remaining(), 0);
    assert.equal(fake.requests.length - first, 5);

    // The stream, in order: the person's message and turn, then per step the model's answer, its
    // tool call, what the execution recorded, and the call's result.
    const types = t.events.map((e) => e.type).filter((x) => x !== "CodeExecutionStarted");
    const from = types.indexOf("ChatUserMessage");
    assert.deepEqual(types.slice(from, from + 4), [
      "ChatUserMessage",
      "ChatTurnStarted",
      "ChatModelMessage",
      "ChatToolCalled",
    ]);
    assert.equal(types.at(-1), "ChatTurnEnded");
    const results = of(t.events, "ChatToolResult").map((e) => e.data);
    assert.equal(results.length, 4);
    assert.equal(results[0]?.ok, true);
    assert.match(String(results[0]?.text), /hello/);
    // The simulated write: provisional id, no wait, the repository untouched.
    assert.equal(results[1]?.ok, true);
    assert.match(String(results[1]?.text), /~1/);
    assert.deepEqual(results[1]?.awaitedActionIds ?? [], []);
    assert.equal(git(bare, "log", "--format=%s", "main"), "initial");
    // The awaited write: applied once after the approval, and the model was told so.
    assert.equal(h.memoryState().filter((l) => l.includes('"Grace"')).length, 1);
    assert.match(sent(first + 3), /approved every awaited write/);
    // The throw: the result says so with its line, and the next request carries it to the model.
    assert.equal(results[3]?.ok ?? false, false); // proto JSON leaves out false
    assert.match(String(results[3]?.text), /boom at three/);
    assert.match(String(results[3]?.text), /line 3/);
    assert.match(sent(first + 4), /boom at three/);
    // Each call's execution id is <turn>.<step>.<n>, and each ran once.
    const executed = of(t.events, "CodeExecuted").map((e) => e.data.executionId);
    assert.deepEqual(
      executed,
      [1, 2, 3, 4].map((s) => `${t.turnId}.${s}.0`),
    );
    assert.equal(of(t.events, "CodeExecutionStarted").length, 4);
    // The system prompt carries the workspace's env declaration.
    assert.match(JSON.stringify(fake.requests[first]?.body.messages?.[0]), /MEMORY/);
  });

  test("malformed tool arguments are recorded with the problem, nothing runs, and the model is asked again", async () => {
    const first = fake.requests.length;
    fake.push(
      { kind: "tool_calls", calls: [{ name: "executeCode", arguments: '{"code": "export default' }] },
      { kind: "tool_calls", calls: [{ name: "executeCode", arguments: '{"code": "console.log(1)"}' }] },
      { kind: "text", text: "Sorry, giving up." },
    );
    const t = await turn("Do something.");
    assert.equal(t.ended.reason, "done");
    assert.equal(fake.remaining(), 0);
    const calls = of(t.events, "ChatToolCalled").map((e) => e.data);
    assert.equal(calls.length, 2);
    assert.equal(calls[0]?.argumentsJson, '{"code": "export default');
    assert.match(String(calls[0]?.problem), /not valid JSON/);
    assert.match(String(calls[1]?.problem), /not a module with a default export/);
    assert.equal(of(t.events, "CodeExecuted").length, 0, "no snippet ran");
    const results = of(t.events, "ChatToolResult").map((e) => e.data);
    assert.deepEqual(
      results.map((r) => r.ok ?? false),
      [false, false],
    );
    assert.match(sent(first + 1), /not valid JSON/);
    assert.match(sent(first + 2), /default export/);
  });

  test("a 429 is retried with backoff and the turn goes on", async () => {
    const first = fake.requests.length;
    fake.push(
      { kind: "error", status: 429, message: "slow down", retryAfterSeconds: 1 },
      { kind: "text", text: "Hi." },
    );
    const t = await turn("Say hi.");
    assert.equal(t.ended.reason, "done", JSON.stringify(t.ended));
    assert.equal(fake.requests.length - first, 2);
    assert.equal(of(t.events, "ChatModelMessage").length, 1);
    assert.equal(of(t.events, "ChatModelMessage")[0]?.data.text, "Hi.");
  });

  test("a provider failing with 5xx on every attempt ends the turn with reason provider and its message", async () => {
    const first = fake.requests.length;
    for (let i = 0; i < 3; i++) fake.push({ kind: "error", status: 503, message: "the model is overloaded" });
    const t = await turn("Anything.");
    assert.equal(t.ended.reason, "provider");
    assert.match(String(t.ended.message), /the model provider failed: .*overloaded/);
    assert.equal(fake.requests.length - first, 3, "AGENT_MODEL_ATTEMPTS attempts, then no more");
    assert.equal(of(t.events, "ChatModelMessage").length, 0);
  });

  test("the step cap ends the turn with a clear reason", async () => {
    const first = fake.requests.length;
    for (let i = 0; i < MAX_STEPS; i++)
      fake.push({ kind: "tool_calls", calls: [run(`export default async () => ${i};`)] });
    const t = await turn("Loop forever.");
    assert.equal(t.ended.reason, "step_cap");
    assert.match(String(t.ended.message), /step cap: 5 model calls \(AGENT_MAX_STEPS\)/);
    assert.equal(fake.requests.length - first, MAX_STEPS);
    assert.equal(of(t.events, "CodeExecuted").length, MAX_STEPS);
    assert.equal(fake.remaining(), 0);
  });

  test("with no model configured the agent is off: starting a chat names the variables to set", async () => {
    const off = agentChats({ store: h.stack.store, client: undefined, config: undefined });
    assert.equal(off.enabled, false);
    const ws = await h.workspace();
    await assert.rejects(off.startChat({ workspaceId: ws, chatId: "c", person: DEV_OWNER }), (err: Error) => {
      assert.ok(err instanceof AgentOff);
      assert.match(err.message, /AGENT_PROVIDER and AGENT_MODEL/);
      assert.match(err.message, /AGENT_MODELS_FILE/);
      return true;
    });
    assert.equal(of(await stream(ws), "ChatStarted").length, 0);
  });
});

/** services/worker/src/main.ts as a child process, resolved once it logged `event:"ready"`. */
const workerProcess = startWorkerProcess;

describe("a worker killed mid-turn", () => {
  const QUEUE = "gatehouse-agent-crash-test";
  const children: Array<{ kill(): Promise<void> }> = [];
  after(async () => {
    for (const c of children) await c.kill();
  });

  /** Runs a one-snippet turn on a worker process, SIGKILLs it at `killWhen`, starts another. */
  async function crashTurn(killWhen: "running" | "finished", busyMs: number) {
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
    const firstWorker = await workerProcess(env);
    children.push(firstWorker);
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
      fake.push(
        {
          kind: "tool_calls",
          calls: [
            run(`export default async (env: any) => {
  const n = (await env.MEMORY.read_graph({})).content.length;
  const until = Date.now() + ${busyMs};
  while (Date.now() < until) {} // busy: the worker is killed meanwhile
  return n;
};`),
          ],
        },
        { kind: "text", text: "Done after the crash." },
      );
      let second: { kill(): Promise<void> } | undefined;
      const t = await turn("Read the graph slowly.", starter.chats, async (ws) => {
        // The kernel claimed the execution (the snippet runs), or recorded its end: kill the worker now.
        await waitUntil(
          `the snippet to ${killWhen === "running" ? "start" : "finish"}`,
          async () =>
            of(await stream(ws), killWhen === "running" ? "CodeExecutionStarted" : "CodeExecuted").length > 0,
          { timeoutMs: 240_000, intervalMs: 20 },
        );
        if (killWhen === "running")
          assert.equal(of(await stream(ws), "CodeExecuted").length, 0, "killed while the snippet runs");
        await firstWorker.kill();
        second = await workerProcess(env);
        children.push(second);
      });
      assert.equal(t.ended.reason, "done", JSON.stringify(t.ended));
      const id = `${t.turnId}.1.0`;
      const named = (type: string) => of(t.events, type).filter((e) => e.data.executionId === id).length;
      assert.equal(named("CodeExecutionStarted"), 1);
      assert.equal(named("CodeExecuted"), 1, "the snippet ran once");
      assert.equal(of(t.events, "ObservationRecorded").length, 1, "its read ran once");
      const results = of(t.events, "ChatToolResult");
      assert.equal(results.length, 1);
      assert.equal(results[0]?.data.ok, true);
      assert.ok(second, "a second worker finished the turn");
    } finally {
      await starter.close();
    }
  }

  test("SIGKILL while a snippet runs: a new worker process resumes the turn and the snippet ran once", () =>
    crashTurn("running", 4000));

  test("SIGKILL right after a snippet finished: a new worker process resumes the turn and the snippet ran once", () =>
    crashTurn("finished", 0));
});
