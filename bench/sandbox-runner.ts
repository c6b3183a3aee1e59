/**
 * Benchmark of the sandbox runner, each figure next to a baseline measured in the same run. Called by the
 * repo's `npm run bench`; runnable alone: `node --no-node-snapshot --import tsx bench/sandbox-runner.ts`.
 *
 * - executeCode of a trivial snippet on a warm workspace sandbox (gRPC Execute stream -> pool -> the
 *   workspace's long-lived sandbox -> fresh isolate), with a short pause between executions (as between an
 *   agent's steps) and back to back, next to a bare isolated-vm call in this process (new isolate + context
 *   + eval);
 * - the first execution of a new workspace while warm sandboxes wait (the pool refilled and settled before
 *   each sample), next to the same with no warm sandbox (a cold `runsc run` + isolate host boot + the
 *   execution);
 * - throughput of trivial executions per second: one workspace back to back, and several workspaces at
 *   once, next to bare isolated-vm calls per second in this process.
 */
import { SandboxRunnerClient } from "@gatehouse/proto";
import {
  executeSnippet,
  type SandboxIsolation,
  type SandboxMode,
  type SandboxRunnerHandle,
  startSandboxRunner,
} from "@gatehouse/sandbox-runner";
import { credentials } from "@grpc/grpc-js";
import ivm from "isolated-vm";
import pino from "pino";

/** Latency percentiles in milliseconds (nearest rank; p99 of fewer than 100 samples is the maximum). */
export interface Percentiles {
  p50: number;
  p99: number;
  n: number;
}

/** Result of benchSandboxRunner. */
export interface SandboxBenchResult {
  /** Layer the runner used. */
  mode: SandboxIsolation;
  /** executeCode on a warm workspace sandbox, one execution every `gapMs` (client measured, gRPC included). */
  runner: Percentiles;
  /** The same, back to back (the sandbox prepares the next isolate while the next request arrives). */
  runnerBackToBack: Percentiles;
  /** Baseline: new isolate + context + eval of the same expression, in this process. */
  bareIsolate: Percentiles;
  /** Pause between executions in `runner`, ms. */
  gapMs: number;
  /** First execution of a new workspace while warm sandboxes wait (the pool refilled before each sample). */
  firstExecutionWarmPool: Percentiles;
  /** First execution of a new workspace with no warm sandbox: cold sandbox start (`runsc run`) + execution. */
  firstExecutionCold: Percentiles;
  /** Trivial executions per second. */
  throughput: {
    /** One workspace, back to back. */
    oneWorkspace: number;
    /** `workspaces` workspaces at once, each back to back. */
    parallel: number;
    workspaces: number;
    /** Baseline: bare isolate + context + eval per second, sequential, in this process. */
    bareIsolate: number;
  };
}

/** Options of benchSandboxRunner. */
export interface SandboxBenchOptions {
  /** Samples of each warm-sandbox latency and of the bare baseline (default 30), after 3 warm-up runs. */
  iterations?: number;
  /** Samples of each first-execution figure (default 10; a cold sample starts a container). */
  firstIterations?: number;
  /** Pause between executions in the warm figure, ms (default 25). */
  gapMs?: number;
  /** Executions per workspace in the throughput figures (default 100). */
  throughputExecutions?: number;
  /** Workspaces at once in the parallel throughput figure (default 4). */
  workspaces?: number;
  /** Sandbox layer (default "auto"); "none" is started with the insecure opt-in. */
  mode?: SandboxMode;
}

function percentiles(samples: number[]): Percentiles {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) =>
    sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(q * sorted.length) - 1))] ?? 0;
  return { p50: round(at(0.5)), p99: round(at(0.99)), n: sorted.length };
}

const round = (ms: number) => Math.round(ms * 100) / 100;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const CODE = "export default async () => 1 + 1";
const SETTLE_MS = 250;

let seq = 0;

async function timedExecution(client: SandboxRunnerClient, workspaceId: string): Promise<number> {
  const began = performance.now();
  const result = await executeSnippet(client, { executionId: `bench-${++seq}`, workspaceId, code: CODE });
  const elapsed = performance.now() - began;
  if (!result.ok) throw new Error(`bench snippet failed: ${result.error?.name}: ${result.error?.message}`);
  return elapsed;
}

async function sequential(
  client: SandboxRunnerClient,
  workspaceId: string,
  iterations: number,
  gapMs: number,
): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < iterations + 3; i++) {
    const elapsed = await timedExecution(client, workspaceId);
    if (i >= 3) samples.push(elapsed);
    if (gapMs > 0) await sleep(gapMs);
  }
  return samples;
}

async function bareIsolate(iterations: number): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < iterations + 3; i++) {
    const began = performance.now();
    const isolate = new ivm.Isolate({ memoryLimit: 128 });
    const context = await isolate.createContext();
    await context.eval("1 + 1");
    isolate.dispose();
    if (i >= 3) samples.push(performance.now() - began);
  }
  return samples;
}

/**
 * First execution of `n` new workspaces, each once the pool is back to its warm count (when it has one)
 * and has settled for SETTLE_MS (a sandbox that just booted is still finishing its start-up work).
 */
async function firstExecutions(
  runner: SandboxRunnerHandle,
  client: SandboxRunnerClient,
  n: number,
  tag: string,
) {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) {
    await runner.pool.whenWarm(120_000);
    await sleep(SETTLE_MS);
    samples.push(await timedExecution(client, `bench-${tag}-${i}`));
  }
  return samples;
}

async function perSecond(run: () => Promise<unknown>, executions: number): Promise<number> {
  const began = performance.now();
  await run();
  return Math.round((executions / (performance.now() - began)) * 1000 * 10) / 10;
}

function start(mode: SandboxMode, warm: number, maxSandboxes: number): Promise<SandboxRunnerHandle> {
  return startSandboxRunner({
    mode,
    insecureNoGvisor: mode === "none",
    logger: pino({ level: "silent" }),
    // Room for every workspace the bench leases plus the warm set, so nothing is evicted.
    pool: { warm, maxSandboxes },
  });
}

/** Runs the benchmark (see the module comment). */
export async function benchSandboxRunner(options: SandboxBenchOptions = {}): Promise<SandboxBenchResult> {
  const iterations = options.iterations ?? 30;
  const firstIterations = options.firstIterations ?? 10;
  const gapMs = options.gapMs ?? 25;
  const throughputExecutions = options.throughputExecutions ?? 100;
  const workspaces = options.workspaces ?? 4;
  const mode = options.mode ?? "auto";

  const bare = await bareIsolate(iterations);
  const bareRate = await perSecond(() => bareIsolate(throughputExecutions), throughputExecutions + 3);

  const maxSandboxes = firstIterations + workspaces + 4;
  const runner = await start(mode, 2, maxSandboxes);
  const client = new SandboxRunnerClient(`127.0.0.1:${runner.port}`, credentials.createInsecure());
  let result: Omit<SandboxBenchResult, "firstExecutionCold">;
  try {
    await runner.pool.whenWarm(120_000);
    const warm = await sequential(client, "bench-warm", iterations, gapMs);
    const backToBack = await sequential(client, "bench-warm", iterations, 0);
    const firstWarm = await firstExecutions(runner, client, firstIterations, "first-warm");
    await runner.pool.whenWarm(120_000);
    const oneWorkspace = await perSecond(
      () => sequential(client, "bench-throughput-0", throughputExecutions - 3, 0),
      throughputExecutions,
    );
    for (let w = 0; w < workspaces; w++) await timedExecution(client, `bench-parallel-${w}`);
    const parallel = await perSecond(
      () =>
        Promise.all(
          Array.from({ length: workspaces }, (_, w) =>
            sequential(client, `bench-parallel-${w}`, throughputExecutions - 3, 0),
          ),
        ),
      throughputExecutions * workspaces,
    );
    result = {
      mode: runner.mode,
      runner: percentiles(warm),
      runnerBackToBack: percentiles(backToBack),
      bareIsolate: percentiles(bare),
      gapMs,
      firstExecutionWarmPool: percentiles(firstWarm),
      throughput: { oneWorkspace, parallel, workspaces, bareIsolate: bareRate },
    };
  } finally {
    client.close();
    await runner.close();
  }

  const coldRunner = await start(mode, 0, maxSandboxes);
  const coldClient = new SandboxRunnerClient(`127.0.0.1:${coldRunner.port}`, credentials.createInsecure());
  try {
    const cold = await firstExecutions(coldRunner, coldClient, firstIterations, "first-cold");
    return { ...result, firstExecutionCold: percentiles(cold) };
  } finally {
    coldClient.close();
    await coldRunner.close();
  }
}

// Run as a script only when this file itself is the entry (stack.ts imports it as a module).
if (process.argv[1] && import.meta.url === `file://${process.argv[1]}`) {
  const result = await benchSandboxRunner({ iterations: Number(process.env.BENCH_ITERATIONS ?? 30) });
  console.log(JSON.stringify(result, null, 2));
}
