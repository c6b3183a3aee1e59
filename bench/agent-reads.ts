/**
 * `npm run bench:agent-reads`: what the agent loop's reads of the workspace stream cost per step as the
 * stream grows, with the worker's chats cache and the kernel's execution-id index off (every read folds
 * the whole stream, as before them) and on, in one run on one SQLite store.
 *
 * For each size in BENCH_AGENT_READS_SIZES, two workspaces are seeded with that many events appended
 * straight through the event store (a kernel's history: CodeExecutionStarted, ObservationRecorded,
 * CodeExecuted with a result, in that mix), then a chat runs BENCH_AGENT_READS_TURNS turns (+1 warm-up)
 * of BENCH_AGENT_STEPS steps. A step makes the store calls the agent activities make, with no model
 * and no sandbox: agentModelStep (read the chats; record the answer and its tool call), agentRunCall
 * (read the chats; the kernel's at-most-once check and claim, the run's observation and CodeExecuted;
 * record the tool result). So the figure is the step's store overhead alone.
 *
 * Env: BENCH_AGENT_READS_SIZES (default "1000,20000,50000" events), BENCH_AGENT_READS_TURNS (4),
 * BENCH_AGENT_STEPS (5). Prints a table; writes bench-results/agent-reads.json.
 */
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { type EventStore, openSqliteEventStore } from "@gatehouse/event-store";
import { configureExecutionIndex, runOnce } from "@gatehouse/kernel/idempotent-execution";
import { CodeExecuted, ExecuteResult } from "@gatehouse/proto";
import { appendChat, readChats } from "@gatehouse/worker/chat-appends";
import { configureChatsCache } from "@gatehouse/worker/chats-cache";
import { resultOf, seed } from "./agent-history.ts";
import { envInt, envStr, gitCommit, log, round, runBench, stats } from "./support.ts";

const ROOT = resolve(fileURLToPath(import.meta.url), "../..");
const TURNS = envInt("BENCH_AGENT_READS_TURNS", 4);
const STEPS = envInt("BENCH_AGENT_STEPS", 5);
const SIZES = envStr("BENCH_AGENT_READS_SIZES", "1000,20000,50000")
  .split(",")
  .map((s) => {
    const n = Number(s.trim());
    if (!Number.isInteger(n) || n < 1)
      throw new Error(`BENCH_AGENT_READS_SIZES must be positive integers separated by commas, got "${s}"`);
    return n;
  });
const PERSON = "user:bench";

/** The q-quantile of `xs` (nearest rank). */
function pct(xs: number[], q: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return round(s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? Number.NaN, 3);
}
const CODE = "export default async () => 1;";

/** One step's store calls, as agentModelStep then agentRunCall make them; returns its wall time, ms. */
async function step(
  store: EventStore,
  ws: string,
  chatId: string,
  turnId: string,
  n: number,
): Promise<number> {
  const t0 = performance.now();
  const toolCallId = `call-${n}`;
  const executionId = `${turnId}.${n}.0`;
  const model = await readChats(store, ws);
  if (!model.chats.chats.get(chatId)) throw new Error(`chat ${chatId} is missing`);
  await appendChat(store, ws, chatId, [
    {
      type: "RecordModelMessage",
      chatId,
      turnId,
      step: n,
      text: "",
      finishReason: "tool-calls",
      inputTokens: 10,
      outputTokens: 5,
    },
    {
      type: "RecordToolCall",
      chatId,
      turnId,
      step: n,
      toolCallId,
      toolName: "execute_code",
      argumentsJson: JSON.stringify({ code: CODE }),
      problem: "",
      executionId,
    },
  ]);
  const run = await readChats(store, ws);
  if (!run.chats.executions.has(executionId)) throw new Error(`tool call ${executionId} is not recorded`);
  const result = await runOnce(store, ws, executionId, CODE, "agent:bench", async () => {
    const r = resultOf(executionId);
    await store.append(
      `workspace-${ws}`,
      [
        {
          type: "CodeExecuted",
          data: CodeExecuted.toJSON(
            CodeExecuted.fromJSON({
              executionId,
              ok: true,
              resultJson: JSON.stringify(ExecuteResult.toJSON(r)),
            }),
          ),
        },
      ],
      "any",
    );
    return r;
  });
  await appendChat(store, ws, chatId, [
    {
      type: "RecordToolResult",
      chatId,
      turnId,
      step: n,
      toolCallId,
      executionId,
      ok: result.ok,
      text: "1",
      awaitedActionIds: [],
    },
  ]);
  return performance.now() - t0;
}

/**
 * A chat of TURNS + 1 turns on `ws` (the first is warm-up): per-step ms of the measured turns, and the
 * chat's first step (the one that meets a cold cache and folds the whole stream once).
 */
async function chat(store: EventStore, ws: string): Promise<{ ms: number[]; coldMs: number }> {
  const by = { actor: PERSON, caller: { kind: "user", id: "bench" } };
  const chatId = "bench-chat";
  await appendChat(
    store,
    ws,
    chatId,
    [{ type: "StartChat", chatId, startedBy: PERSON, model: "fake/m" }],
    by,
  );
  const ms: number[] = [];
  let coldMs = Number.NaN;
  for (let t = 0; t <= TURNS; t++) {
    const turnId = `turn-${t}`;
    await appendChat(
      store,
      ws,
      chatId,
      [
        {
          type: "SendMessage",
          chatId,
          turnId,
          text: "go",
          sentBy: PERSON,
          model: "fake/m",
          maxSteps: 50,
          maxTokens: 1e6,
        },
      ],
      by,
    );
    for (let s = 1; s <= STEPS; s++) {
      const took = await step(store, ws, chatId, turnId, s);
      if (t > 0) ms.push(took);
      else if (s === 1) coldMs = took;
    }
    await appendChat(store, ws, chatId, [{ type: "EndTurn", chatId, turnId, reason: "done", message: "" }]);
  }
  return { ms, coldMs };
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), "gh-bench-agent-reads-"));
  const store = openSqliteEventStore(join(dir, "events.sqlite"));
  const loadBefore = loadavg().map((x) => round(x, 1));
  const started = performance.now();
  const results: Record<string, unknown>[] = [];
  try {
    for (const size of SIZES) {
      for (const mode of ["off", "on"] as const) {
        const ws = `reads-${mode}-${size}`;
        await seed(store, ws, size);
        // Fresh bounds per workspace: "off" folds the whole stream on every read, "on" is the default.
        configureChatsCache(store, mode === "off" ? { maxWorkspaces: 0 } : {});
        configureExecutionIndex(store, mode === "off" ? { maxWorkspaces: 0 } : {});
        const t0 = performance.now();
        const full = await store.readStream(`workspace-${ws}`);
        const readAllMs = performance.now() - t0;
        const { ms: steps, coldMs } = await chat(store, ws);
        const all = stats(steps);
        const s = { n: all.n, p50: all.p50, p95: pct(steps, 0.95), max: all.max };
        results.push({
          size,
          mode,
          streamAtStart: full.length,
          stepMs: s,
          readWholeStreamMs: round(readAllMs, 1),
        });
        log(
          `${size} events, cache ${mode}: step p50 ${round(s.p50, 1)} ms, p95 ${round(s.p95, 1)} ms (${s.n} steps; the chat's first step ${round(coldMs, 1)} ms; reading the whole stream once: ${round(readAllMs, 1)} ms)`,
        );
      }
    }
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
  console.log("\nagent step, store calls only (no model, no sandbox), ms p50 / p95:");
  console.log("events in the stream | caches off (whole stream per read) | caches on | off / on (p50)");
  for (const size of SIZES) {
    const off = results.find((r) => r.size === size && r.mode === "off")?.stepMs as {
      p50: number;
      p95: number;
    };
    const on = results.find((r) => r.size === size && r.mode === "on")?.stepMs as {
      p50: number;
      p95: number;
    };
    console.log(
      `${size} | ${round(off.p50, 1)} / ${round(off.p95, 1)} | ${round(on.p50, 1)} / ${round(on.p95, 1)} | ${round(off.p50 / on.p50, 1)}×`,
    );
  }
  const totalS = round((performance.now() - started) / 1000, 1);
  const machine = {
    cpus: cpus().length,
    loadAverage: { before: loadBefore, after: loadavg().map((x) => round(x, 1)) },
  };
  console.log(
    `\n${TURNS} measured turns (+1 warm-up) of ${STEPS} steps per workspace; whole bench ${totalS} s; ${machine.cpus} CPUs, load ${loadBefore[0]} -> ${machine.loadAverage.after[0]}; commit ${gitCommit(ROOT)}`,
  );
  const out = join(ROOT, "bench-results");
  mkdirSync(out, { recursive: true });
  writeFileSync(
    join(out, "agent-reads.json"),
    `${JSON.stringify({ at: new Date().toISOString(), commit: gitCommit(ROOT), turns: TURNS, steps: STEPS, machine, results }, null, 2)}\n`,
  );
}

runBench(main);
