/**
 * The built-in agent loop end to end: the real kernel, sandbox, MCP gatekeeper (the real memory
 * server), approval service and a real Temporal dev server, with the agent worker in-process (and,
 * for the crash test, as its own process: services/worker/src/main.ts). No real model can be
 * reached here, so the model is the FAKE OpenAI-compatible server of @gatehouse/agent-core/testing,
 * replaying a script per test. Every assertion reads the workspace stream (chat events, the
 * executions, observations and actions they caused) or what the fake received.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import type { AgentConfig } from "@gatehouse/agent-core/providers";
import { type FakeOpenAiServer, startFakeOpenAiServer } from "@gatehouse/agent-core/testing";
import { waitUntil } from "@gatehouse/service-kit";
import { type AgentChats, AgentOff, agentChats, startAgent } from "@gatehouse/worker";
import { DEV_OWNER, type Harness, startHarness } from "./harness.ts";

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
) {
  const ws = await h.workspace("mcp://memory");
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

/** The text of every message the fake received in request `i`. */
function sent(i: number): string {
  return JSON.stringify(fake.requests[i]?.body.messages ?? []);
}

describe("the agent loop through the real stack with a FAKE model", () => {
  test("a turn reads, writes (simulated: the turn goes on), throws (the error and its line go back), then answers", async () => {
    const first = fake.requests.length;
    fake.push(
      {
        kind: "tool_calls",
        calls: [run(`export default async (env: any) => (await env.MEMORY.read_graph({})).content.length;`)],
      },
      {
        kind: "tool_calls",
        calls: [
          run(`export default async (env: any) =>
  env.MEMORY.create_entities({ entities: [{ name: "Grace", entityType: "person", observations: ["y"] }] });`),
        ],
      },
      {
        kind: "tool_calls",
        calls: [run(`export default async () => {\n  const x = 1;\n  throw new Error("boom at three");\n};`)],
      },
      { kind: "text", text: "Read the graph, queued Grace for approval; the last snippet failed." },
    );
    const t = await turn("Look at the memory graph and add Grace.");
    assert.equal(t.ended.reason, "done", JSON.stringify(t.ended));
    assert.equal(t.ended.steps, 4);
    assert.equal(fake.remaining(), 0);
    assert.equal(fake.requests.length - first, 4);

    // The stream, in order: the person's message and turn, then per step the model's answer, its
    // tool call, what the execution recorded, and the call's result.
    const types = t.events.map((e) => e.type).filter((x) => x !== "CodeExecutionStarted");
    const from = types.indexOf("ChatUserMessage");
    assert.deepEqual(types.slice(from, from + 7), [
      "ChatUserMessage",
      "ChatTurnStarted",
      "ChatModelMessage",
      "ChatToolCalled",
      "ObservationRecorded",
      "CodeExecuted",
      "ChatToolResult",
    ]);
    assert.equal(types.at(-1), "ChatTurnEnded");
    const results = of(t.events, "ChatToolResult").map((e) => e.data);
    assert.equal(results.length, 3);
    assert.equal(results[0]?.ok, true);
    // The simulated write: an action pending for people, the snippet and the turn went on.
    const submitted = of(t.events, "ActionSubmitted");
    assert.equal(submitted.length, 1);
    assert.equal(results[1]?.ok, true);
    assert.deepEqual(results[1]?.awaitedActionIds ?? [], []);
    assert.ok(!h.memoryState().some((l) => l.includes('"Grace"')), "the write waits for a person");
    // The throw: the result says so with its line, and the next request carries it to the model.
    assert.equal(results[2]?.ok, false);
    assert.match(String(results[2]?.text), /boom at three/);
    assert.match(String(results[2]?.text), /line 3/);
    assert.match(sent(first + 3), /boom at three/);
    assert.match(sent(first + 3), /line 3/);
    // Each call's execution id is <turn>.<step>.<n>, and each ran once.
    const executed = of(t.events, "CodeExecuted").map((e) => e.data.executionId);
    assert.deepEqual(executed, [`${t.turnId}.1.0`, `${t.turnId}.2.0`, `${t.turnId}.3.0`]);
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
      results.map((r) => r.ok),
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

const WORKER_DIR = fileURLToPath(new URL("../../../services/worker", import.meta.url));

/** services/worker/src/main.ts as a child process, resolved once it logged `event:"ready"`. */
async function workerProcess(
  env: Record<string, string>,
): Promise<{ child: ChildProcess; kill(): Promise<void> }> {
  const child = spawn(process.execPath, ["--no-node-snapshot", "--import", "tsx", "src/main.ts"], {
    cwd: WORKER_DIR,
    env: { ...process.env, WORKER_METRICS_ADDR: "127.0.0.1:0", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker not ready: ${output.slice(-2000)}`)), 180_000);
    const seen = (d: Buffer) => {
      output = (output + d.toString()).slice(-8000);
      if (output.includes('"event":"ready"')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on("data", seen);
    child.stderr?.on("data", seen);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`worker exited before ready: ${output.slice(-2000)}`));
    });
  });
  return {
    child,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}

describe("a worker killed mid-turn", () => {
  const QUEUE = "gatehouse-agent-crash-test";
  const children: Array<{ kill(): Promise<void> }> = [];
  after(async () => {
    for (const c of children) await c.kill();
  });

  test("SIGKILL while a snippet runs: a new worker process resumes the turn and the snippet ran once", async () => {
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
  const until = Date.now() + 4000;
  while (Date.now() < until) {} // busy: the worker is killed meanwhile
  return n;
};`),
          ],
        },
        { kind: "text", text: "Done after the crash." },
      );
      let second: { kill(): Promise<void> } | undefined;
      const t = await turn("Read the graph slowly.", starter.chats, async (ws) => {
        // The kernel claimed the execution: the snippet is running. Kill the worker now.
        await waitUntil(
          "the snippet to start",
          async () => of(await stream(ws), "CodeExecutionStarted").length > 0,
          { timeoutMs: 240_000, intervalMs: 50 },
        );
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
  });
});
