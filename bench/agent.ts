/**
 * `npm run bench:agent`: the built-in agent's overhead per step, model time excluded, next to the same
 * snippets run the ways a person runs them, all in one run on `gatehouse dev`'s in-process stack
 * (kernel, gVisor sandbox, the real memory MCP server behind gatekeeper-mcp, approval, a Temporal dev
 * server, the agent worker). No real model can be reached here: the model is the FAKE
 * OpenAI-compatible server of @gatehouse/agent-core/testing, answering every request at once.
 *
 * Each round runs, for each of two snippets — READ (`env.MEMORY.read_graph`, an observed read through
 * a binding) and PLAIN (no binding) — one agent turn of BENCH_AGENT_STEPS steps, each step's tool call
 * running the snippet, then a final text answer; then BENCH_AGENT_CLI_RUNS `gatehouse exec` runs of the
 * snippet (the compiled CLI, a process per run, as a person types it); then BENCH_AGENT_STEPS
 * Kernel.ExecuteCode calls exactly as `gatehouse exec` makes them (in this process, no CLI start).
 * Round 1 is warm-up. Per step (read off the stream's event times, bench/agent-steps.ts):
 * ChatTurnStarted or the previous ChatToolResult → this step's ChatToolResult, minus the fake's own
 * time for the step's request (measured at the fake). The worker's own `model_step` log line gives
 * the model call as the agent saw it (the AI SDK's generateText, HTTP included); both are reported.
 *
 * Env: BENCH_AGENT_ROUNDS (default 21, the first is warm-up), BENCH_AGENT_STEPS (default 5),
 * BENCH_AGENT_CLI_RUNS (default 2 per snippet per round), BENCH_AGENT_MAX_SECONDS (default 200: no
 * round starts after that many seconds of rounds; the rounds done are reported), BENCH_SANDBOX
 * (auto | gvisor | none), BENCH_AGENT_SEED_EVENTS (default 0: that many events of a kernel history appended
 * to each workspace stream before the turns, bench/agent-history.ts), BENCH_AGENT_READ_CACHES
 * (on | off, default on: off makes every chat read and execution-id check fold the whole stream).
 * Prints a table; writes bench-results/agent.json.
 */
import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { foldChats } from "@gatehouse/agent-core";
import type { AgentConfig } from "@gatehouse/agent-core/providers";
import { type FakeOpenAiServer, startFakeOpenAiServer } from "@gatehouse/agent-core/testing";
import { startDevStack } from "@gatehouse/dev-stack";
import type { EventStore, StoredEvent } from "@gatehouse/event-store";
import { configureExecutionIndex } from "@gatehouse/kernel/idempotent-execution";
import { KernelClient } from "@gatehouse/proto";
import { configureChatsCache } from "@gatehouse/worker/chats-cache";
import { credentials } from "@grpc/grpc-js";
import { Client, Connection } from "@temporalio/client";
import { DefaultLogger, Runtime } from "@temporalio/worker";
import pino from "pino";
import { seed } from "./agent-history.ts";
import { type StepTiming, type TurnTiming, turnTiming } from "./agent-steps.ts";
import { activitySpans } from "./agent-temporal.ts";
import {
  envInt,
  envSandbox,
  envStr,
  fmt,
  gitCommit,
  log,
  printTable,
  type Row,
  returned,
  round,
  runBench,
  timed,
  unary,
} from "./support.ts";

const ROOT = resolve(fileURLToPath(import.meta.url), "../..");
const CLI = join(ROOT, "apps/cli/bin/gatehouse.js");
const ROUNDS = envInt("BENCH_AGENT_ROUNDS", 21);
const MAX_SECONDS = envInt("BENCH_AGENT_MAX_SECONDS", 200);
if (ROUNDS < 2)
  throw new Error(
    `BENCH_AGENT_ROUNDS must be at least 2 (one warm-up round and one measured), got ${ROUNDS}`,
  );
const STEPS = envInt("BENCH_AGENT_STEPS", 5);
const CLI_RUNS = envInt("BENCH_AGENT_CLI_RUNS", 2);
const SANDBOX = envSandbox();
const SEED_EVENTS = Number(envStr("BENCH_AGENT_SEED_EVENTS", "0"));
if (!Number.isInteger(SEED_EVENTS) || SEED_EVENTS < 0)
  throw new Error(
    `BENCH_AGENT_SEED_EVENTS must be a whole number ≥ 0, got "${process.env.BENCH_AGENT_SEED_EVENTS}"`,
  );
const READ_CACHES = envStr("BENCH_AGENT_READ_CACHES", "on");
if (READ_CACHES !== "on" && READ_CACHES !== "off")
  throw new Error(`BENCH_AGENT_READ_CACHES must be "on" or "off", got "${READ_CACHES}"`);
/** Longest wait for one turn to end (a step is well under a second here; this is a hang, not slowness). */
const TURN_DEADLINE_MS = 180_000;
const PERSON = "user:bench";
const run = promisify(execFile);

/** The two snippets: a read through a binding (an observation) and one that touches no binding. */
const SNIPPETS = {
  read: {
    code: "export default async (env: any) => (await env.MEMORY.read_graph({})).content.length;",
    urls: ["mcp://memory"],
    check: (v: unknown) => typeof v === "number",
  },
  plain: {
    code: "export default async () => [1, 2, 3].reduce((a, b) => a + b, 0);",
    urls: [] as string[],
    check: (v: unknown) => v === 6,
  },
} as const;
type Kind = keyof typeof SNIPPETS;
const KINDS: Kind[] = ["read", "plain"];

/** Nearest-rank percentile `q` (0–1) of `xs`, as support.ts's `stats` computes p50/p99. */
function pct(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return round(s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? Number.NaN, 2);
}
const p50 = (xs: number[]) => pct(xs, 0.5);
const p95 = (xs: number[]) => pct(xs, 0.95);
const summary = (xs: number[]) => ({ n: xs.length, p50: p50(xs), p95: p95(xs), max: pct(xs, 1) });

/** A pino destination that keeps the agent worker's `model_step` lines (and passes errors to stderr). */
function modelStepLog() {
  const ms = new Map<string, number>();
  return {
    ms,
    stream: {
      write(line: string) {
        if (line.includes('"event":"model_step"')) {
          const o = JSON.parse(line) as { turnId: string; step: number; ms: number };
          ms.set(`${o.turnId}/${o.step}`, o.ms);
        } else if (/"level":(50|60)/.test(line)) process.stderr.write(line);
      },
    },
  };
}

/** The per-step figures reported, in print order, with their labels. */
const BREAKDOWN: Array<[keyof AgentStep, string]> = [
  ["totalMs", "step, ChatToolResult to ChatToolResult"],
  ["fakeMs", "FAKE model's own time (subtracted)"],
  ["overheadMs", "step, model time excluded"],
  ["temporalMs", "Temporal: 2 workflow tasks + queue waits"],
  ["temporalDecideMs", "  the 2 workflow tasks"],
  ["temporalQueueMs", "  the 2 queue waits"],
  ["modelActivityMs", "agentModelStep activity"],
  ["toModelRequestMs", "  step start → request at the FAKE"],
  ["clientModelMs", "  generateText in the worker"],
  ["modelAnswerToRecordMs", "  FAKE answered → ChatModelMessage"],
  ["runActivityMs", "agentRunCall activity"],
  ["toClaimMs", "  ChatModelMessage → kernel's claim"],
  ["kernelMs", "  claim → CodeExecuted"],
  ["executionMs", "  execution (CodeExecuted.durationMs)"],
  ["afterRecordMs", "  CodeExecuted → ChatToolResult"],
];

/** Resolves once turn `turnId` has ended (its ChatTurnEnded is in the stream after `after`). @throws after TURN_DEADLINE_MS. */
function turnEnded(store: EventStore, streamId: string, after: number, turnId: string): Promise<void> {
  return new Promise((resolveEnded, reject) => {
    const timer = setTimeout(() => {
      void sub.close();
      reject(new Error(`turn ${turnId} did not end within ${TURN_DEADLINE_MS / 1000} s`));
    }, TURN_DEADLINE_MS);
    const sub = store.subscribeToStream(streamId, {
      after,
      onEvent(e) {
        if (e.type === "ChatTurnEnded" && (e.data as { turnId?: string }).turnId === turnId) {
          clearTimeout(timer);
          void sub.close();
          resolveEnded();
        }
      },
      onError(err) {
        clearTimeout(timer);
        reject(err);
      },
    });
  });
}

/** A measured agent step: its timings from the stream, the FAKE, the worker's log and Temporal's history. */
interface AgentStep extends StepTiming {
  /** The FAKE's own time answering the step's request. */
  fakeMs: number;
  /** The worker's generateText around that request (its `model_step` log line, 1 ms resolution). */
  clientModelMs: number;
  /** The step's start → the request's arrival at the FAKE. */
  toModelRequestMs: number;
  /** The FAKE's last byte → ChatModelMessage recorded. */
  modelAnswerToRecordMs: number;
  /** Temporal's part: the two workflow tasks that scheduled the step's activities and their queue waits. */
  temporalMs: number;
  /** Of which the two workflow tasks (previous activity completed → next scheduled). */
  temporalDecideMs: number;
  /** Of which the two queue waits (scheduled → started). */
  temporalQueueMs: number;
  /** agentModelStep, started → completed. */
  modelActivityMs: number;
  /** agentRunCall, started → completed. */
  runActivityMs: number;
  /** totalMs − fakeMs: the step with the model's own time taken out. */
  overheadMs: number;
}

async function main() {
  const began = performance.now();
  const loadBefore = loadavg().map((x) => round(x, 2));
  const work = mkdtempSync(join(tmpdir(), "gatehouse-bench-agent-"));
  const fake: FakeOpenAiServer = await startFakeOpenAiServer();
  const captured = modelStepLog();
  // The Temporal SDK's own log (worker state changes) at WARN, like the stack's pino loggers.
  Runtime.install({ logger: new DefaultLogger("WARN") });
  const agent: AgentConfig = {
    deployment: { provider: "openai-compatible", model: "fake-coder", baseUrl: fake.baseUrl },
    workspaces: new Map(),
    // One attempt: a failing model call ends the turn (reason provider) and the bench says so.
    limits: { maxSteps: STEPS + 1, maxTokens: 10_000_000, maxResultBytes: 16_384, modelAttempts: 1 },
  };
  log(`starting the dev stack (sandbox ${SANDBOX}) with the agent pointed at the FAKE model`);
  const stack = await startDevStack({
    dataDir: work,
    sandbox: SANDBOX,
    agent,
    logger: pino({ level: "info" }, captured.stream),
  }).catch(async (err: unknown) => {
    await fake.close();
    rmSync(work, { recursive: true, force: true });
    throw err;
  });
  const startedMs = performance.now() - began;
  const kernel = new KernelClient(stack.addresses.kernel, credentials.createInsecure());
  const temporalConnection = await Connection.connect({ address: stack.addresses.temporal });
  const temporal = new Client({ connection: temporalConnection });
  try {
    const ws = {} as Record<Kind, string>;
    const files = {} as Record<Kind, string>;
    for (const kind of KINDS) {
      ws[kind] = (
        await unary(kernel, kernel.createWorkspace, {
          name: `bench-agent-${kind}`,
          owner: PERSON,
          members: [],
        })
      ).id;
      for (const url of SNIPPETS[kind].urls)
        await unary(kernel, kernel.introduceResource, { workspaceId: ws[kind], url, name: "" });
      files[kind] = join(work, `${kind}.ts`);
      writeFileSync(files[kind], `${SNIPPETS[kind].code}\n`);
      if (SEED_EVENTS > 0) {
        log(`seeding workspace ${kind} with ${SEED_EVENTS} events`);
        await seed(stack.store, ws[kind], SEED_EVENTS);
      }
    }
    if (READ_CACHES === "off") {
      configureChatsCache(stack.store, { maxWorkspaces: 0 });
      configureExecutionIndex(stack.store, { maxWorkspaces: 0 });
    }

    /** One agent turn of STEPS tool-call steps on `kind`; returns its timings and per-step figures. */
    let turnNo = 0;
    const agentTurn = async (kind: Kind) => {
      const workspaceId = ws[kind];
      const streamId = `workspace-${workspaceId}`;
      const turnId = `bench-turn-${++turnNo}`;
      // A chat per turn: every turn's conversation is the same size (the stream still grows).
      const chatId = `bench-chat-${turnNo}`;
      await stack.agent.startChat({ workspaceId, chatId, person: PERSON });
      const firstRequest = fake.requests.length;
      for (let s = 0; s < STEPS; s++)
        fake.push({
          kind: "tool_calls",
          calls: [{ name: "executeCode", arguments: JSON.stringify({ code: SNIPPETS[kind].code }) }],
        });
      fake.push({ kind: "text", text: "Done." });
      const after = await stack.store.streamRevision(streamId);
      const ended = turnEnded(stack.store, streamId, after, turnId);
      const sent = performance.now();
      const { workflowId } = await stack.agent.sendMessage({
        workspaceId,
        chatId,
        turnId,
        text: `Run the snippet ${STEPS} times.`,
        person: PERSON,
      });
      await ended;
      const wallMs = performance.now() - sent;
      const events = (await stack.store.readStream(streamId, { fromRevision: after + 1 })) as StoredEvent[];
      const timing: TurnTiming = turnTiming(events, turnId);
      if (timing.reason !== "done" || timing.steps.length !== STEPS)
        throw new Error(
          `turn ${turnId} ended "${timing.reason}" after ${timing.steps.length} steps: ${JSON.stringify(events.at(-1)?.data)}`,
        );
      const requests = fake.requests.slice(firstRequest);
      if (requests.length !== STEPS + 1 || fake.remaining() !== 0)
        throw new Error(`turn ${turnId}: the FAKE got ${requests.length} requests for ${STEPS + 1} answers`);
      for (const e of events)
        if (e.type === "ChatToolResult" && (e.data as { ok?: boolean }).ok !== true)
          throw new Error(`turn ${turnId}: a snippet failed: ${(e.data as { text?: string }).text}`);
      // ChatTurnEnded is appended inside the last activity: its completion follows.
      const handle = temporal.workflow.getHandle(workflowId);
      await handle.result();
      const spans = activitySpans(await handle.fetchHistory());
      const names = spans.map((a) => a.name).join(",");
      const expected = [
        ...Array(STEPS).fill("agentModelStep,agentRunCall"),
        "agentModelStep,agentEndTurn",
      ].join(",");
      if (names !== expected)
        throw new Error(`turn ${turnId} ran the activities ${names}, expected ${expected}`);
      const steps: AgentStep[] = timing.steps.map((s, i) => {
        const request = requests[i];
        const fakeMs = request?.answerMs ?? Number.NaN;
        const [model, runCall] = [spans[2 * i], spans[2 * i + 1]];
        const decide = (model?.decideMs ?? Number.NaN) + (runCall?.decideMs ?? Number.NaN);
        const queue = (model?.queueMs ?? Number.NaN) + (runCall?.queueMs ?? Number.NaN);
        return {
          ...s,
          fakeMs,
          clientModelMs: captured.ms.get(`${turnId}/${s.step}`) ?? Number.NaN,
          toModelRequestMs: (request?.receivedAt ?? Number.NaN) - s.startAt,
          modelAnswerToRecordMs: s.startAt + s.modelPhaseMs - ((request?.receivedAt ?? Number.NaN) + fakeMs),
          temporalMs: decide + queue,
          temporalDecideMs: decide,
          temporalQueueMs: queue,
          modelActivityMs: model?.runMs ?? Number.NaN,
          runActivityMs: runCall?.runMs ?? Number.NaN,
          overheadMs: s.totalMs - fakeMs,
        };
      });
      return {
        turnId,
        steps,
        closingOverheadMs: timing.closingMs - (requests[STEPS]?.answerMs ?? Number.NaN),
        turnMs: timing.turnMs,
        wallMs,
        streamLength: (await stack.store.streamRevision(streamId)) + 1,
      };
    };
    const direct = async (kind: Kind) => {
      // The request `gatehouse exec` sends (apps/cli/src/commands/workspace.ts).
      const r = await unary(kernel, kernel.executeCode, {
        workspaceId: ws[kind],
        code: SNIPPETS[kind].code,
        caller: { kind: "user", id: "" },
        limits: { wallTimeMs: 0, heapMb: 0, outputBytes: 0 },
        executionId: "",
      });
      if (!SNIPPETS[kind].check(returned(r))) throw new Error(`the ${kind} snippet returned ${r.returnJson}`);
    };
    const cli = async (kind: Kind) => {
      const { stdout } = await run(
        process.execPath,
        ["--no-node-snapshot", CLI, "--json", "exec", ws[kind], files[kind]],
        { env: { ...process.env, GATEHOUSE_KERNEL_ADDRESS: stack.addresses.kernel }, timeout: 120_000 },
      );
      const value = JSON.parse(stdout).returnValue;
      if (!SNIPPETS[kind].check(value)) throw new Error(`gatehouse exec of ${kind} printed ${stdout}`);
    };

    const agentSteps: Record<Kind, AgentStep[]> = { read: [], plain: [] };
    const overheadByRound: Record<Kind, number[]> = { read: [], plain: [] };
    const closing: Record<Kind, number[]> = { read: [], plain: [] };
    const turnWall: Record<Kind, number[]> = { read: [], plain: [] };
    const cliMs: Record<Kind, number[]> = { read: [], plain: [] };
    const directMs: Record<Kind, number[]> = { read: [], plain: [] };
    // What each agent activity reads before its work, timed here alike (the activities log no times).
    const foldMs: Record<Kind, number[]> = { read: [], plain: [] };
    const describeMs: Record<Kind, number[]> = { read: [], plain: [] };
    const streamLength: Record<Kind, number[]> = { read: [], plain: [] };
    const roundsBegan = performance.now();
    let rounds = 0;
    for (let r = 0; r < ROUNDS; r++) {
      if (r >= 2 && performance.now() - roundsBegan > MAX_SECONDS * 1000) {
        log(`stopping after ${r} rounds: BENCH_AGENT_MAX_SECONDS (${MAX_SECONDS} s) passed`);
        break;
      }
      rounds = r + 1;
      const warm = r === 0;
      log(`round ${r + 1}/${ROUNDS}${warm ? " (warm-up)" : ""}`);
      // The same order every round, each kind's agent turn next to its baselines, so drift in the
      // machine's load hits all of them alike.
      for (const kind of KINDS) {
        const t = await agentTurn(kind);
        const c = await timed(CLI_RUNS, 0, () => cli(kind));
        const d = await timed(STEPS, 0, () => direct(kind));
        const f = await timed(STEPS, 0, async () => {
          foldChats(await stack.store.readStream(`workspace-${ws[kind]}`));
        });
        const b = await timed(STEPS, 0, async () => {
          await unary(kernel, kernel.describeBindings, { workspaceId: ws[kind] });
        });
        streamLength[kind].push(t.streamLength);
        if (warm) continue;
        agentSteps[kind].push(...t.steps);
        overheadByRound[kind].push(p50(t.steps.map((x) => x.overheadMs)));
        closing[kind].push(t.closingOverheadMs);
        turnWall[kind].push(t.wallMs);
        cliMs[kind].push(...c);
        directMs[kind].push(...d);
        foldMs[kind].push(...f);
        describeMs[kind].push(...b);
      }
    }

    const rows: Row[] = [];
    const detail: Record<string, unknown> = {};
    for (const kind of KINDS) {
      const steps = agentSteps[kind];
      const overhead = steps.map((s) => s.overheadMs);
      const label = kind === "read" ? "read through a binding" : "snippet without bindings";
      for (const [q, f] of [
        ["p50", p50],
        ["p95", p95],
      ] as const) {
        rows.push(
          {
            id: `agent.${kind}.step.${q}`,
            measurement: `agent step, ${label}, model time excluded, ${q}`,
            value: f(overhead),
            baseline: `\`gatehouse exec\` (CLI process) ${q}`,
            baselineValue: f(cliMs[kind]),
            unit: "ms",
            ratio: round(f(overhead) / f(cliMs[kind]), 2),
          },
          {
            id: `agent.${kind}.step_vs_kernel.${q}`,
            measurement: `agent step, ${label}, model time excluded, ${q}`,
            value: f(overhead),
            baseline: `Kernel.ExecuteCode as gatehouse exec sends it ${q}`,
            baselineValue: f(directMs[kind]),
            unit: "ms",
            ratio: round(f(overhead) / f(directMs[kind]), 2),
          },
        );
      }
      const parts: Record<string, ReturnType<typeof summary>> = {};
      for (const [key] of BREAKDOWN) parts[key] = summary(steps.map((s) => Number(s[key])));
      detail[kind] = {
        steps: parts,
        firstStepOverheadMs: summary(steps.filter((s) => s.step === 1).map((s) => s.overheadMs)),
        laterStepOverheadMs: summary(steps.filter((s) => s.step > 1).map((s) => s.overheadMs)),
        closingStepOverheadMs: summary(closing[kind]),
        turnWallMs: summary(turnWall[kind]),
        cliExecMs: summary(cliMs[kind]),
        kernelExecuteCodeMs: summary(directMs[kind]),
        readStreamAndFoldChatsMs: summary(foldMs[kind]),
        describeBindingsMs: summary(describeMs[kind]),
        streamLengthAfterEachRound: streamLength[kind],
        stepOverheadP50ByRound: overheadByRound[kind],
      };
    }
    printTable(rows);
    console.log(
      "\nwhere an agent step's time went, p50 / p95 in ms (parts overlap: see docs/benchmarks.md):",
    );
    const width = Math.max(...BREAKDOWN.map(([, label]) => label.length));
    for (const [key, label] of BREAKDOWN) {
      const cells = KINDS.map((kind) => {
        const q = (detail[kind] as { steps: Record<string, { p50: number; p95: number }> }).steps[key];
        return `${kind} ${fmt(q?.p50 ?? Number.NaN)} / ${fmt(q?.p95 ?? Number.NaN)}`.padEnd(24);
      });
      console.log(`  ${label.padEnd(width)}  ${cells.join("  ")}`);
    }
    for (const [key, label] of [
      ["firstStepOverheadMs", "step 1 only (includes starting the workflow), model time excluded"],
      ["laterStepOverheadMs", "steps 2+, model time excluded"],
      ["closingStepOverheadMs", "closing step (final answer → turn ended), model time excluded"],
      ["turnWallMs", `whole turn of ${STEPS} steps, sendMessage → ChatTurnEnded seen`],
      [
        "readStreamAndFoldChatsMs",
        "the workspace stream read and folded (each activity does it, appends twice), from here",
      ],
      ["describeBindingsMs", "Kernel.DescribeBindings (each model step calls it), from here"],
    ] as const) {
      const cells = KINDS.map((kind) => {
        const q = (detail[kind] as Record<string, { p50: number; p95: number }>)[key];
        return `${kind} ${fmt(q?.p50 ?? Number.NaN)} / ${fmt(q?.p95 ?? Number.NaN)}`;
      });
      console.log(`  ${label}: ${cells.join("; ")}`);
    }
    for (const kind of KINDS) {
      const byRound = overheadByRound[kind];
      const lengths = streamLength[kind];
      console.log(
        `  ${kind}: step overhead p50 in the first measured round ${fmt(byRound[0] ?? Number.NaN)}, in the last ${fmt(byRound.at(-1) ?? Number.NaN)} (workspace stream ${lengths[1]} → ${lengths.at(-1)} events)`,
      );
    }
    const totalS = round((performance.now() - began) / 1000, 1);
    const machine = {
      cpus: cpus().length,
      cpuModel: cpus()[0]?.model ?? "",
      node: process.version,
      loadAverage: { before: loadBefore, after: loadavg().map((x) => round(x, 2)) },
    };
    console.log(
      `\n${rounds - 1} measured rounds (+1 warm-up) of ${STEPS}-step turns; ${SEED_EVENTS} events seeded per workspace, read caches ${READ_CACHES}; sandbox ${stack.sandboxMode}; stack started in ${round(startedMs / 1000, 1)} s; whole bench ${totalS} s; ${machine.cpus} CPUs, load ${loadBefore[0]} -> ${machine.loadAverage.after[0]}; commit ${gitCommit(ROOT)}`,
    );
    const out = join(ROOT, "bench-results");
    mkdirSync(out, { recursive: true });
    writeFileSync(
      join(out, "agent.json"),
      `${JSON.stringify(
        {
          at: new Date().toISOString(),
          commit: gitCommit(ROOT),
          sandbox: stack.sandboxMode,
          machine,
          settings: {
            rounds,
            roundsAsked: ROUNDS,
            maxSeconds: MAX_SECONDS,
            warmupRounds: 1,
            steps: STEPS,
            seedEvents: SEED_EVENTS,
            readCaches: READ_CACHES,
            cliRuns: CLI_RUNS,
          },
          seconds: { stackStart: round(startedMs / 1000, 1), total: totalS },
          rows,
          detail,
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    kernel.close();
    await temporalConnection.close();
    await stack.close();
    await fake.close();
    rmSync(work, { recursive: true, force: true });
  }
}

runBench(main);
