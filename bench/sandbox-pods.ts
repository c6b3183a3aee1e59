/**
 * `npm run bench:sandbox-pods`: the Kubernetes sandbox backend on the local cluster next to the runsc
 * backend on the same machine, in one run. For each backend, a runner on this host:
 * - warm claim → first instruction: a new workspace's first snippet returns Date.now() as its first
 *   statement; the figure is that minus the time the request was sent (ms clock, same host), with a
 *   warm sandbox free each time;
 * - first execution of a new workspace, end to end (claim + run + result);
 * - executeCode on the workspace's warm sandbox (its 2nd… executions), end to end over gRPC;
 * - cold start (kubernetes: pod created → isolate host ready; runsc: container started → ready), from
 *   new workspaces with no warm sandbox.
 * Needs the cluster (`npm run cluster -- up`) and runsc. BENCH_CLAIMS (default 12), BENCH_EXECS (default 60),
 * BENCH_COLD (default 4).
 */

import { ensureCluster } from "@gatehouse/deploy/test/cluster";
import { ensureImages } from "@gatehouse/deploy/test/install";
import { backendOptions, sandboxNamespace, template } from "@gatehouse/deploy/test/sandbox-pods";
import { executeSnippet, type SandboxRunnerHandle, startSandboxRunner } from "@gatehouse/sandbox-runner";
import pino from "pino";
import { envInt, printTable, type Row, round, type Stats, stats } from "./support.ts";

const CLAIMS = envInt("BENCH_CLAIMS", 12);
const EXECS = envInt("BENCH_EXECS", 60);
const COLD = envInt("BENCH_COLD", 4);
const NS = "gh-bench-sbpods";
const logger = pino({ level: "silent" });

interface Figures {
  firstInstruction: Stats;
  firstExecution: Stats;
  execute: Stats;
  cold: Stats;
}

let n = 0;
const exec = (runner: SandboxRunnerHandle, workspaceId: string, code: string) =>
  executeSnippet(`127.0.0.1:${runner.port}`, {
    executionId: `bench-${++n}`,
    workspaceId,
    code,
    bindings: {},
    limits: {},
  });

async function measure(
  kind: string,
  start: (warm: number) => Promise<SandboxRunnerHandle>,
): Promise<Figures> {
  const firstInstruction: number[] = [];
  const firstExecution: number[] = [];
  const execute: number[] = [];
  const cold: number[] = [];
  const runner = await start(2);
  try {
    for (let i = 0; i < CLAIMS; i++) {
      await runner.pool.whenWarm(300_000);
      const sent = Date.now();
      const t0 = performance.now();
      const r = await exec(runner, `${kind}-claim-${i}`, "export default () => Date.now()");
      firstExecution.push(performance.now() - t0);
      if (!r.ok) throw new Error(`${kind}: ${r.error?.message}`);
      firstInstruction.push(Number(r.returnJson) - sent);
    }
    const ws = `${kind}-claim-0`;
    await exec(runner, ws, "export default () => 0");
    for (let i = 0; i < EXECS; i++) {
      const t0 = performance.now();
      const r = await exec(runner, ws, "export default () => 1");
      execute.push(performance.now() - t0);
      if (!r.ok) throw new Error(`${kind}: ${r.error?.message}`);
    }
  } finally {
    await runner.close();
  }
  const coldRunner = await start(0);
  try {
    for (let i = 0; i < COLD; i++) {
      const t0 = performance.now();
      const r = await exec(coldRunner, `${kind}-cold-${i}`, "export default () => 1");
      cold.push(performance.now() - t0);
      if (!r.ok) throw new Error(`${kind}: ${r.error?.message}`);
    }
  } finally {
    await coldRunner.close();
  }
  return {
    firstInstruction: stats(firstInstruction),
    firstExecution: stats(firstExecution),
    execute: stats(execute),
    cold: stats(cold),
  };
}

const cluster = await ensureCluster();
try {
  const { registry } = await ensureImages();
  await sandboxNamespace(NS);
  const pool = (warm: number) => ({
    warm,
    maxSandboxes: CLAIMS + COLD + 4,
    idleMs: 600_000,
    readyTimeoutMs: 300_000,
  });
  const runsc = await measure("runsc", (warm) =>
    startSandboxRunner({ mode: "gvisor", logger, pool: pool(warm) }),
  );
  const pods = await measure("pods", (warm) =>
    startSandboxRunner({
      mode: "kubernetes",
      logger,
      pool: pool(warm),
      kubernetes: backendOptions(template(NS, "gh-bench-runner", registry)),
    }),
  );
  const row = (id: string, measurement: string, k: number, r: number, goal?: string, note?: string): Row => ({
    id,
    measurement,
    value: round(k),
    baseline: "runsc backend, same run",
    baselineValue: round(r),
    unit: "ms",
    ratio: round(k / r),
    ...(goal ? { goal } : {}),
    ...(note ? { note } : {}),
  });
  printTable([
    row(
      "claim-p50",
      "warm claim → first instruction p50",
      pods.firstInstruction.p50,
      runsc.firstInstruction.p50,
      "≤ 35 ms",
    ),
    row(
      "claim-p99",
      "warm claim → first instruction p99",
      pods.firstInstruction.p99,
      runsc.firstInstruction.p99,
    ),
    row(
      "first-exec-p50",
      "new workspace, first executeCode p50",
      pods.firstExecution.p50,
      runsc.firstExecution.p50,
    ),
    row("exec-p50", "executeCode p50, warm sandbox", pods.execute.p50, runsc.execute.p50),
    row("exec-p99", "executeCode p99, warm sandbox", pods.execute.p99, runsc.execute.p99),
    row(
      "exec-overhead",
      "executeCode overhead p50 (pods − runsc)",
      pods.execute.p50 - runsc.execute.p50,
      runsc.execute.p50,
      "≤ 15 ms",
    ),
    row("cold-p50", "cold start → first result p50", pods.cold.p50, runsc.cold.p50),
  ]);
  console.log(JSON.stringify({ runsc, pods, claims: CLAIMS, execs: EXECS, cold: COLD }));
} finally {
  await cluster.stop();
}
