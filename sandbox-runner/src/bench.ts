/**
 * Benchmark: executeCode overhead of a trivial snippet through the runner (gRPC stream + isolate host
 * process [+ gVisor container] + fresh isolate) next to a bare isolated-vm call in this process
 * (fresh isolate + context + eval), measured in the same run. Called by the repo's `npm run bench`.
 */
import ivm from "isolated-vm";
import pino from "pino";
import { executeSnippet } from "./client.ts";
import { startSandboxRunner } from "./index.ts";
import type { SandboxMode } from "./launcher.ts";

/** Latency percentiles in milliseconds. */
export interface Percentiles {
  p50: number;
  p99: number;
  n: number;
}

/** Result of benchSandboxRunner. */
export interface SandboxBenchResult {
  /** Layer the runner used. */
  mode: "gvisor" | "none";
  /** Trivial snippet end to end through the runner's gRPC Execute stream. */
  runner: Percentiles;
  /** Baseline: new isolate + context + eval of the same expression, in-process. */
  bareIsolate: Percentiles;
}

function percentiles(samples: number[]): Percentiles {
  const sorted = [...samples].sort((a, b) => a - b);
  const at = (q: number) => sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? 0;
  return { p50: round(at(0.5)), p99: round(at(0.99)), n: sorted.length };
}

const round = (ms: number) => Math.round(ms * 100) / 100;

/**
 * Runs the benchmark. `iterations` per side (default 30; gVisor starts a container per execution, so
 * keep it modest), after 2 warm-up runs.
 */
export async function benchSandboxRunner(
  options: { iterations?: number; mode?: SandboxMode } = {},
): Promise<SandboxBenchResult> {
  const iterations = options.iterations ?? 30;
  const runner = await startSandboxRunner({
    mode: options.mode ?? "auto",
    logger: pino({ level: "silent" }),
  });
  try {
    const address = `127.0.0.1:${runner.port}`;
    const code = "export default async () => 1 + 1";
    const runnerSamples: number[] = [];
    for (let i = 0; i < iterations + 2; i++) {
      const began = performance.now();
      const result = await executeSnippet(address, { executionId: `bench-${i}`, workspaceId: "ws-test", code });
      if (!result.ok) throw new Error(`bench snippet failed: ${result.error?.name}`);
      if (i >= 2) runnerSamples.push(performance.now() - began);
    }
    const bareSamples: number[] = [];
    for (let i = 0; i < iterations + 2; i++) {
      const began = performance.now();
      const isolate = new ivm.Isolate({ memoryLimit: 128 });
      const context = await isolate.createContext();
      await context.eval("1 + 1");
      isolate.dispose();
      if (i >= 2) bareSamples.push(performance.now() - began);
    }
    return { mode: runner.mode, runner: percentiles(runnerSamples), bareIsolate: percentiles(bareSamples) };
  } finally {
    await runner.close();
  }
}

if (process.argv[1] && import.meta.url === `file://${process.argv[1]}`) {
  const result = await benchSandboxRunner({ iterations: Number(process.env.BENCH_ITERATIONS ?? 20) });
  console.log(JSON.stringify(result, null, 2));
}
