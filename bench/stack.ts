/**
 * `npm run bench`: Gatehouse's numbers, each next to a baseline measured in the same run, with the
 * ratio. Prints a table and writes the same as JSON to bench-results/latest.json.
 *
 *  1. executeCode of a trivial snippet through the real services (kernel -> sandbox runner -> the
 *     workspace's sandbox [gVisor] -> fresh isolate) vs a bare isolated-vm call in this process; plus the
 *     runner alone (`benchSandboxRunner`): warm workspace sandbox vs bare, first execution of a new
 *     workspace with a warm pool vs a cold sandbox start, executions per second vs bare isolates per second.
 *  2. One MCP read through the gatekeeper (sandbox -> kernel relay -> gatekeeper -> MCP server, plus
 *     the observation append), as (T_K - T_0) / K, vs a direct MCP SDK client call to its own
 *     server-memory process over stdio, on a copy of the same memory file.
 *  3. (store.ts, also `npm run bench:store` alone) The event store: appends per second at batch
 *     1/10/100 on embedded SQLite and PostgreSQL vs the raw driver (better-sqlite3 / pg) inserting the
 *     same rows; replay events per second (readStream + approval-core evolve) vs the raw driver's
 *     SELECT + JSON.parse of the same rows.
 *  4. (bench-git.ts) One git readFile through gatekeeper-git (the whole path, observation included), as
 *     (T_K - T_0) / K, vs `git show main:<path>` run by this process on the same repository; and
 *     the overlay cost: listFiles of a tree in a workspace with 100 pending commits vs one with none.
 *
 * Env overrides (all positive integers):
 *   BENCH_ITERATIONS          executeCode runs and bare isolate runs (default 30)
 *   BENCH_RUNNER_ITERATIONS   benchSandboxRunner latency samples per figure (default BENCH_ITERATIONS)
 *   BENCH_MCP_READS           K, reads per snippet and direct calls per repetition (default 200)
 *   BENCH_MCP_REPS            repetitions of the T_K / T_0 snippets and of the direct K calls (default 5)
 *   BENCH_APPEND_EVENTS       events per batch size and backend in the append bench (default 3000)
 *   BENCH_REPLAY_EVENTS       events in the replayed workspace stream (default 20000)
 *   BENCH_REPLAY_REPS         timed replays per side and backend (default 5)
 *   BENCH_STORE_POSTGRES      "0" leaves PostgreSQL out of section 3 (default: measured when installed)
 *   BENCH_GIT_READS           K for the git reads (default 50)
 *   BENCH_GIT_PENDING         pending commits in the overlay-cost workspace (default 100)
 *   BENCH_SANDBOX             sandbox mode for the dev stack and runner: auto | gvisor | none (default auto)
 */
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { startDevStack } from "@gatehouse/dev-stack";
import { KernelClient } from "@gatehouse/proto";
import { credentials } from "@grpc/grpc-js";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { getDefaultEnvironment, StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import ivm from "isolated-vm";
import { type GitSamples, gitRows, sampleGit } from "./git.ts";
import { benchSandboxRunner, type SandboxBenchResult } from "./sandbox-runner.ts";
import { storeBench, storeBenchOptionsFromEnv } from "./store.ts";
import {
  envInt,
  envSandbox,
  log,
  median,
  printTable,
  type Row,
  returned,
  round,
  runBench,
  stats,
  unary,
} from "./support.ts";

const ROOT = resolve(fileURLToPath(import.meta.url), "../..");

const ITERATIONS = envInt("BENCH_ITERATIONS", 30);
const RUNNER_ITERATIONS = envInt("BENCH_RUNNER_ITERATIONS", ITERATIONS);
const MCP_READS = envInt("BENCH_MCP_READS", 200);
const MCP_REPS = envInt("BENCH_MCP_REPS", 5);
const GIT_READS = envInt("BENCH_GIT_READS", 50);
const GIT_PENDING = envInt("BENCH_GIT_PENDING", 100);
const SANDBOX = envSandbox();
const WARMUP = 2;

// ---------------------------------------------------------------------------------------------------
// baselines

/** New isolate + context + eval of `1`, in this process. */
async function bareIsolate(iterations: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < iterations + WARMUP; i++) {
    const began = performance.now();
    const isolate = new ivm.Isolate({ memoryLimit: 128 });
    const context = await isolate.createContext();
    await context.eval("1");
    isolate.dispose();
    if (i >= WARMUP) samples.push(performance.now() - began);
  }
  return samples;
}

/** Direct MCP SDK client on its own server-memory process; per-call latencies of `reps * k` calls. */
async function directMcpReads(memoryFile: string, k: number, reps: number): Promise<number[]> {
  const client = new Client({ name: "gatehouse-bench", version: "0.1.0" });
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [join(ROOT, "node_modules/@modelcontextprotocol/server-memory/dist/index.js")],
    env: { ...getDefaultEnvironment(), MEMORY_FILE_PATH: memoryFile },
    stderr: "ignore",
  });
  await client.connect(transport);
  try {
    const samples: number[] = [];
    for (let i = 0; i < WARMUP; i++) await client.callTool({ name: "read_graph", arguments: {} });
    for (let r = 0; r < reps; r++) {
      for (let i = 0; i < k; i++) {
        const began = performance.now();
        const res = await client.callTool({ name: "read_graph", arguments: {} });
        samples.push(performance.now() - began);
        if (res.isError) throw new Error("direct read_graph returned isError");
      }
    }
    return samples;
  } finally {
    await client.close();
  }
}

/** A memory file with some content so read_graph returns a non-trivial graph (~40 lines). */
function seedMemory(file: string) {
  const lines: string[] = [];
  for (let i = 0; i < 30; i++) {
    lines.push(
      JSON.stringify({
        type: "entity",
        name: `Entity ${i}`,
        entityType: i % 2 ? "person" : "project",
        observations: [`observation ${i}a about something`, `observation ${i}b`],
      }),
    );
  }
  for (let i = 0; i < 10; i++) {
    lines.push(
      JSON.stringify({ type: "relation", from: `Entity ${i}`, to: `Entity ${i + 1}`, relationType: "knows" }),
    );
  }
  writeFileSync(file, `${lines.join("\n")}\n`);
}

// ---------------------------------------------------------------------------------------------------
// main

async function main() {
  const startedAt = new Date();
  const t0 = performance.now();
  const loadBefore = loadavg().map((x) => round(x, 2));
  const work = mkdtempSync(join(tmpdir(), "gatehouse-bench-"));
  // Section 3's options (BENCH_APPEND_EVENTS, BENCH_REPLAY_*, BENCH_STORE_POSTGRES): read now, so a bad value fails at once.
  const storeOptions = storeBenchOptionsFromEnv(work);
  const dataDir = join(work, "stack");
  mkdirSync(dataDir, { recursive: true });
  seedMemory(join(dataDir, "memory.jsonl"));

  const rows: Row[] = [];
  const detail: Record<string, unknown> = {};
  const notes: string[] = [];
  let sandboxMode = "unknown";

  try {
    // --- 1 + 2: through the dev stack -----------------------------------------------------------
    log(`starting dev stack (sandbox: ${SANDBOX}) in ${dataDir}`);
    const stack = await startDevStack({ dataDir, sandbox: SANDBOX });
    sandboxMode = stack.sandboxMode;
    log(`sandbox mode: ${sandboxMode}`);
    const kernel = new KernelClient(stack.addresses.kernel, credentials.createInsecure());
    const exec = (workspaceId: string, code: string, wallTimeMs = 60_000) =>
      unary(kernel, kernel.executeCode, {
        workspaceId,
        code,
        caller: { kind: "agent", id: "bench" },
        limits: { wallTimeMs, heapMb: 0, outputBytes: 0 },
        executionId: "",
      });

    const execSamples: number[] = [];
    const kReads: number[] = [];
    const zeroReads: number[] = [];
    let git: GitSamples | undefined;
    /** Per-read ms as timed inside the snippet with Date.now() (no sandbox start-up in it). */
    const inSnippet: number[] = [];
    try {
      // 1. trivial snippet
      const wsTrivial = (
        await unary(kernel, kernel.createWorkspace, {
          name: "bench-trivial",
          owner: "user:bench",
          members: [],
        })
      ).id;
      log(`executeCode trivial x${ITERATIONS} (+${WARMUP} warm-up)`);
      for (let i = 0; i < ITERATIONS + WARMUP; i++) {
        const began = performance.now();
        const r = await exec(wsTrivial, "export default async () => 1");
        const ms = performance.now() - began;
        if (returned(r) !== 1) throw new Error(`trivial snippet returned ${r.returnJson}`);
        if (i >= WARMUP) execSamples.push(ms);
      }

      // 2. MCP reads through the gatekeeper
      const wsMem = (
        await unary(kernel, kernel.createWorkspace, { name: "bench-mcp", owner: "user:bench", members: [] })
      ).id;
      await unary(kernel, kernel.introduceResource, { workspaceId: wsMem, url: "mcp://memory", name: "" });
      const readLoop = (k: number) => `export default async (env: any) => {
  let n = 0;
  const began = Date.now();
  for (let i = 0; i < ${k}; i++) n += (await env.MEMORY.read_graph({})).content.length;
  return { n, ms: Date.now() - began };
}`;
      const codeK = readLoop(MCP_READS);
      const code0 = readLoop(0);
      log(`MCP via gatekeeper: ${MCP_REPS} reps of K=${MCP_READS} and K=0 (+1 warm-up each)`);
      returned(await exec(wsMem, readLoop(3))); // connects the gatekeeper to server-memory
      returned(await exec(wsMem, code0));
      for (let r = 0; r < MCP_REPS; r++) {
        // Interleaved so drift (stream growth, GC, page cache) hits both sides alike.
        let began = performance.now();
        const { n, ms } = returned(await exec(wsMem, codeK)) as { n: number; ms: number };
        kReads.push(performance.now() - began);
        inSnippet.push(ms / MCP_READS);
        if (n !== MCP_READS) throw new Error(`read loop returned ${n}, expected ${MCP_READS}`);
        began = performance.now();
        returned(await exec(wsMem, code0));
        zeroReads.push(performance.now() - began);
      }
      const observations = (await stack.store.readStream(`workspace-${wsMem}`)).filter(
        (e) => e.type === "ObservationRecorded",
      ).length;
      detail.observationsRecorded = observations;
      const expectedObs = 3 + MCP_REPS * MCP_READS;
      if (observations !== expectedObs) {
        notes.push(
          `expected ${expectedObs} ObservationRecorded events in the bench workspace, found ${observations}`,
        );
      }

      // 4. git reads through gatekeeper-git, and the overlay cost of pending commits
      git = await sampleGit({
        kernel,
        exec,
        reposDir: join(dataDir, "repos"),
        work,
        reads: GIT_READS,
        pending: GIT_PENDING,
        reps: MCP_REPS,
      });
    } finally {
      kernel.close();
      log("closing dev stack");
      await stack.close();
    }

    log(`bare isolated-vm x${ITERATIONS}`);
    const bareSamples = await bareIsolate(ITERATIONS);
    const execStats = stats(execSamples);
    const bareStats = stats(bareSamples);
    detail.executeCode = { samplesMs: execStats, bareIsolateMs: bareStats };
    rows.push(
      {
        id: "exec.p50",
        measurement: `executeCode trivial p50 (${sandboxMode})`,
        value: execStats.p50,
        baseline: "bare isolate+context+eval p50",
        baselineValue: bareStats.p50,
        unit: "ms",
        ratio: execStats.p50 / bareStats.p50,
      },
      {
        id: "exec.p99",
        measurement: `executeCode trivial p99 (${sandboxMode})`,
        value: execStats.p99,
        baseline: "bare isolate+context+eval p99",
        baselineValue: bareStats.p99,
        unit: "ms",
        ratio: execStats.p99 / bareStats.p99,
      },
    );

    // runner alone (its own runner instance; the dev stack is closed by now)
    log(`benchSandboxRunner x${RUNNER_ITERATIONS}`);
    const runner: SandboxBenchResult = await benchSandboxRunner({
      iterations: RUNNER_ITERATIONS,
      mode: SANDBOX,
    });
    detail.sandboxRunner = runner;
    // Kernel + its gRPC hop over the runner alone: a difference of medians from two separate runs, so
    // it is only as good as the noise allows (it can come out negative); kept out of the table.
    detail.kernelOverRunnerP50Ms = round(execStats.p50 - runner.runner.p50, 3);
    if (runner.mode !== sandboxMode)
      notes.push(`runner bench used ${runner.mode}, dev stack used ${sandboxMode}`);
    const warmLabel = `warm workspace sandbox, ${runner.gapMs} ms apart`;
    rows.push(
      {
        id: "runner.p50",
        measurement: `runner alone p50 (${runner.mode}, ${warmLabel})`,
        value: runner.runner.p50,
        baseline: "bare isolate (runner bench) p50",
        baselineValue: runner.bareIsolate.p50,
        unit: "ms",
        ratio: runner.runner.p50 / runner.bareIsolate.p50,
      },
      {
        id: "runner.p99",
        measurement: `runner alone p99 (${runner.mode}, ${warmLabel})`,
        value: runner.runner.p99,
        baseline: "bare isolate (runner bench) p99",
        baselineValue: runner.bareIsolate.p99,
        unit: "ms",
        ratio: runner.runner.p99 / runner.bareIsolate.p99,
      },
      {
        id: "runner.b2b.p50",
        measurement: `runner alone p50 (${runner.mode}, warm workspace sandbox, back to back)`,
        value: runner.runnerBackToBack.p50,
        baseline: "bare isolate (runner bench) p50",
        baselineValue: runner.bareIsolate.p50,
        unit: "ms",
        ratio: runner.runnerBackToBack.p50 / runner.bareIsolate.p50,
      },
      {
        id: "runner.first.p50",
        measurement: `first execution of a new workspace, warm pool p50 (${runner.mode})`,
        value: runner.firstExecutionWarmPool.p50,
        baseline: "same with no warm sandbox (cold sandbox start) p50",
        baselineValue: runner.firstExecutionCold.p50,
        unit: "ms",
        ratio: runner.firstExecutionWarmPool.p50 / runner.firstExecutionCold.p50,
      },
      {
        id: "runner.throughput.1ws",
        measurement: `trivial executions per second, one workspace (${runner.mode})`,
        value: runner.throughput.oneWorkspace,
        baseline: "bare isolate+context+eval per second",
        baselineValue: runner.throughput.bareIsolate,
        unit: "/s",
        ratio: runner.throughput.oneWorkspace / runner.throughput.bareIsolate,
      },
      {
        id: "runner.throughput.parallel",
        measurement: `trivial executions per second, ${runner.throughput.workspaces} workspaces at once (${runner.mode})`,
        value: runner.throughput.parallel,
        baseline: "bare isolate+context+eval per second",
        baselineValue: runner.throughput.bareIsolate,
        unit: "/s",
        ratio: runner.throughput.parallel / runner.throughput.bareIsolate,
      },
    );

    // MCP direct baseline on a copy of the same memory file
    const copy = join(work, "memory-copy.jsonl");
    copyFileSync(join(dataDir, "memory.jsonl"), copy);
    log(`MCP direct: ${MCP_REPS} x ${MCP_READS} read_graph calls`);
    const direct = await directMcpReads(copy, MCP_READS, MCP_REPS);
    const directStats = stats(direct);
    // Per-read through the gatekeeper: per repetition (T_K - T_0)/K, plus the difference of medians.
    const perRep = kReads.map((tk, i) => (tk - (zeroReads[i] ?? 0)) / MCP_READS);
    const perRepStats = stats(perRep);
    const perReadFromMedians = (median(kReads) - median(zeroReads)) / MCP_READS;
    const perReadFromMeans = (stats(kReads).mean - stats(zeroReads).mean) / MCP_READS;
    detail.mcp = {
      k: MCP_READS,
      reps: MCP_REPS,
      snippetKMs: stats(kReads),
      snippet0Ms: stats(zeroReads),
      perReadPerRepMs: perRepStats,
      perReadFromMediansMs: round(perReadFromMedians, 3),
      perReadFromMeansMs: round(perReadFromMeans, 3),
      perReadInSnippetMs: stats(inSnippet),
      directPerCallMs: directStats,
    };
    rows.push(
      {
        id: "mcp.read.p50",
        measurement: `MCP read via gatekeeper, (med T_K - med T_0)/K`,
        value: round(perReadFromMedians, 3),
        baseline: "direct SDK client read p50",
        baselineValue: directStats.p50,
        unit: "ms",
        ratio: perReadFromMedians / directStats.p50,
      },
      {
        id: "mcp.read.mean",
        measurement: `MCP read via gatekeeper, (mean T_K - mean T_0)/K`,
        value: round(perReadFromMeans, 3),
        baseline: "direct SDK client read mean",
        baselineValue: directStats.mean,
        unit: "ms",
        ratio: perReadFromMeans / directStats.mean,
      },
      {
        id: "mcp.read.inSnippet",
        measurement: "MCP read via gatekeeper, timed in snippet (mean)",
        value: round(stats(inSnippet).mean, 3),
        baseline: "direct SDK client read mean",
        baselineValue: directStats.mean,
        unit: "ms",
        ratio: stats(inSnippet).mean / directStats.mean,
        note: "Date.now() around the loop inside the sandbox; cross-check of (T_K - T_0)/K",
      },
    );

    // --- 4: git rows (samples taken while the stack ran)
    if (git) {
      const g = gitRows(git, { reads: GIT_READS, pending: GIT_PENDING, reps: MCP_REPS });
      rows.push(...g.rows);
      detail.git = g.detail;
    }

    // --- 3: the event store (store.ts) ------------------------------------------------------
    const store = await storeBench(storeOptions);
    rows.push(...store.rows);
    detail.store = store.detail;
    notes.push(...store.notes);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }

  for (const row of rows) row.ratio = round(row.ratio, 3);
  const loadAfter = loadavg().map((x) => round(x, 2));
  if (Math.max(loadBefore[0] ?? 0, loadAfter[0] ?? 0) > cpus().length) {
    notes.push(
      `1-min load average ${loadBefore[0]} before / ${loadAfter[0]} after on ${cpus().length} CPUs: other work was running, expect noise`,
    );
  }
  const totalSec = round((performance.now() - t0) / 1000, 1);
  const result = {
    startedAt: startedAt.toISOString(),
    totalSec,
    node: process.version,
    platform: `${process.platform}-${process.arch}`,
    cpus: cpus().length,
    loadAverage: { before: loadBefore, after: loadAfter },
    sandboxMode,
    config: {
      iterations: ITERATIONS,
      runnerIterations: RUNNER_ITERATIONS,
      mcpReads: MCP_READS,
      mcpReps: MCP_REPS,
      store: (({ dir: _dir, ...config }) => config)(storeOptions),
      sandbox: SANDBOX,
      warmup: WARMUP,
    },
    rows,
    detail,
    notes,
  };

  printTable(rows);
  console.log(
    `\nsandbox mode: ${sandboxMode}   total: ${totalSec}s   node ${process.version}   load ${loadBefore[0]} -> ${loadAfter[0]} (${cpus().length} CPUs)`,
  );
  for (const n of notes) console.log(`note: ${n}`);
  const outDir = join(ROOT, "bench-results");
  mkdirSync(outDir, { recursive: true });
  const outFile = join(outDir, "latest.json");
  writeFileSync(outFile, `${JSON.stringify(result, null, 2)}\n`);
  console.log(`wrote ${outFile}`);
}

runBench(main);
