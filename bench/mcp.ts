/**
 * `npm run bench:mcp` (also run by `npm run bench`): the gateway's MCP endpoint for agents, each
 * figure next to a baseline measured in the same run on the same dev stack and workspace.
 *   1. execute_code of a trivial snippet over Streamable HTTP (the MCP SDK's Client, one session),
 *      p50/p99, next to Kernel.ExecuteCode called directly over gRPC and `gatehouse exec` (a CLI
 *      process per run, as a person types it) of the same snippet.
 *   2. BENCH_MCP_SESSIONS (default 50) MCP sessions on one workspace, each calling execute_code at
 *      once for BENCH_MCP_ROUNDS rounds (default 3): p50/p99 and errors, next to the same number of
 *      concurrent Kernel.ExecuteCode calls.
 * Env: BENCH_MCP_CALLS (default 50) sequential calls for 1, BENCH_MCP_CLI_RUNS (default 10) CLI
 * runs, BENCH_SANDBOX (auto | gvisor | none). Writes bench-results/mcp.json.
 */

import { execFile } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { startDevStack } from "@gatehouse/dev-stack";
import { connectMcpHttp, type McpHttp, structuredOf, textOf } from "@gatehouse/e2e/support/mcp-http-client";
import { KernelClient } from "@gatehouse/proto";
import { credentials } from "@grpc/grpc-js";
import pino from "pino";
import {
  envInt,
  envSandbox,
  log,
  type Row,
  returned,
  round,
  runBench,
  stats,
  timed,
  unary,
} from "./support.ts";

const ROOT = resolve(fileURLToPath(import.meta.url), "../..");
const CALLS = envInt("BENCH_MCP_CALLS", 50);
const CLI_RUNS = envInt("BENCH_MCP_CLI_RUNS", 10);
const SESSIONS = envInt("BENCH_MCP_SESSIONS", 50);
const ROUNDS = envInt("BENCH_MCP_ROUNDS", 3);
const SANDBOX = envSandbox();
const WARMUP = 3;
const SNIPPET = "export default async () => 1";
const run = promisify(execFile);

/** `concurrency` calls at once, `rounds` times: per-call ms and the number that failed. */
async function concurrent(
  rounds: number,
  concurrency: number,
  call: (i: number) => Promise<void>,
): Promise<{ samples: number[]; errors: number; wallMs: number; why: Record<string, number> }> {
  const samples: number[] = [];
  let errors = 0;
  const why: Record<string, number> = {};
  const began = performance.now();
  for (let r = 0; r < rounds; r++) {
    await Promise.all(
      Array.from({ length: concurrency }, async (_, i) => {
        const t = performance.now();
        try {
          await call(i);
          samples.push(performance.now() - t);
        } catch (err) {
          errors++;
          const reason =
            /limit of \d+ concurrent executions/.exec((err as Error).message)?.[0] ??
            (err as Error).message.slice(0, 120);
          why[reason] = (why[reason] ?? 0) + 1;
        }
      }),
    );
  }
  return { samples, errors, wallMs: performance.now() - began, why };
}

async function main() {
  const loadBefore = loadavg().map((x) => round(x, 2));
  const work = mkdtempSync(join(tmpdir(), "gatehouse-bench-mcp-"));
  // Refusals under load are counted below, not logged one by one.
  const stack = await startDevStack({ dataDir: work, sandbox: SANDBOX, logger: pino({ level: "fatal" }) });
  const kernel = new KernelClient(stack.addresses.kernel, credentials.createInsecure());
  const token = stack.devTokens.find((t) => t.subject === "dev-approver")?.token ?? "";
  const rows: Row[] = [];
  const sessions: McpHttp[] = [];
  try {
    const ws = (
      await unary(kernel, kernel.createWorkspace, {
        name: "bench-mcp",
        owner: "user:dev-approver",
        members: [],
      })
    ).id;
    const direct = async () => {
      const r = await unary(kernel, kernel.executeCode, {
        workspaceId: ws,
        code: SNIPPET,
        caller: { kind: "agent", id: "bench" },
        limits: { wallTimeMs: 60_000, heapMb: 0, outputBytes: 0 },
        executionId: "",
      });
      if (returned(r) !== 1) throw new Error(`the snippet returned ${r.returnJson}`);
    };
    const viaMcp = async (s: McpHttp) => {
      const r = await s.client.callTool({ name: "execute_code", arguments: { code: SNIPPET } }, undefined, {
        timeout: 120_000,
      });
      if (r.isError || structuredOf<{ returnValue?: unknown }>(r).returnValue !== 1)
        throw new Error(`execute_code answered ${textOf(r)}`);
    };

    log(
      `Kernel.ExecuteCode direct and execute_code over Streamable HTTP, interleaved, x${CALLS} (+${WARMUP} warm-up)`,
    );
    const one = await connectMcpHttp(stack.addresses.gateway, ws, token);
    sessions.push(one);
    // Interleaved, so drift (other load on the machine, stream growth, GC) hits both alike.
    const directSamples: number[] = [];
    const mcpSamples: number[] = [];
    for (let i = 0; i < CALLS + WARMUP; i++) {
      const [d] = await timed(1, 0, direct);
      const [m] = await timed(1, 0, () => viaMcp(one));
      if (i >= WARMUP) {
        directSamples.push(d ?? Number.NaN);
        mcpSamples.push(m ?? Number.NaN);
      }
    }
    const directMs = stats(directSamples);
    const mcpMs = stats(mcpSamples);
    log(`gatehouse exec x${CLI_RUNS} (+1 warm-up)`);
    const file = join(work, "trivial.ts");
    writeFileSync(file, `${SNIPPET}\n`);
    const cliMs = stats(
      await timed(CLI_RUNS, 1, async () => {
        const { stdout } = await run(
          process.execPath,
          [
            "--no-node-snapshot",
            "--import",
            "tsx",
            join(ROOT, "apps/cli/src/main.ts"),
            "--json",
            "exec",
            ws,
            file,
          ],
          { env: { ...process.env, GATEHOUSE_KERNEL_ADDRESS: stack.addresses.kernel }, timeout: 120_000 },
        );
        if (JSON.parse(stdout).returnValue !== 1) throw new Error(`gatehouse exec printed ${stdout}`);
      }),
    );
    rows.push(
      {
        id: "mcp.execute.p50",
        measurement: "execute_code trivial over Streamable HTTP p50",
        value: mcpMs.p50,
        baseline: "Kernel.ExecuteCode direct (gRPC) p50",
        baselineValue: directMs.p50,
        unit: "ms",
        ratio: mcpMs.p50 / directMs.p50,
      },
      {
        id: "mcp.execute.p99",
        measurement: "execute_code trivial over Streamable HTTP p99",
        value: mcpMs.p99,
        baseline: "Kernel.ExecuteCode direct (gRPC) p99",
        baselineValue: directMs.p99,
        unit: "ms",
        ratio: mcpMs.p99 / directMs.p99,
      },
      {
        id: "mcp.execute.vs_cli.p50",
        measurement: "execute_code trivial over Streamable HTTP p50",
        value: mcpMs.p50,
        baseline: "`gatehouse exec` of the same snippet p50 (a CLI process per run)",
        baselineValue: cliMs.p50,
        unit: "ms",
        ratio: mcpMs.p50 / cliMs.p50,
      },
    );

    log(`opening ${SESSIONS} MCP sessions`);
    const opened = await concurrent(1, SESSIONS, async () => {
      sessions.push(await connectMcpHttp(stack.addresses.gateway, ws, token));
    });
    const many = sessions.slice(1);
    log(`${many.length} sessions x ${ROUNDS} rounds of execute_code at once`);
    const mcpMany = await concurrent(ROUNDS, many.length, (i) => viaMcp(many[i] as McpHttp));
    log(`${many.length} concurrent Kernel.ExecuteCode x ${ROUNDS} rounds`);
    const directMany = await concurrent(ROUNDS, many.length, () => direct());
    const mm = stats(mcpMany.samples);
    const dm = stats(directMany.samples);
    rows.push(
      {
        id: "mcp.sessions.p50",
        measurement: `execute_code, ${many.length} sessions at once on one workspace, p50 (${ROUNDS} rounds)`,
        value: mm.p50,
        baseline: `${many.length} concurrent Kernel.ExecuteCode p50`,
        baselineValue: dm.p50,
        unit: "ms",
        ratio: mm.p50 / dm.p50,
      },
      {
        id: "mcp.sessions.p99",
        measurement: `execute_code, ${many.length} sessions at once on one workspace, p99`,
        value: mm.p99,
        baseline: `${many.length} concurrent Kernel.ExecuteCode p99`,
        baselineValue: dm.p99,
        unit: "ms",
        ratio: mm.p99 / dm.p99,
      },
    );
    const errors = {
      opening: opened.errors,
      mcpCalls: mcpMany.errors,
      directCalls: directMany.errors,
      why: { opening: opened.why, mcpCalls: mcpMany.why, directCalls: directMany.why },
    };
    for (const r of rows) {
      r.ratio = round(r.ratio, 2);
      console.log(`${r.measurement}: ${r.value} ms | ${r.baseline}: ${r.baselineValue} ms | ${r.ratio}x`);
    }
    console.log(
      `errors: ${errors.opening} of ${SESSIONS} sessions failed to open, ${errors.mcpCalls} of ${mcpMany.samples.length + errors.mcpCalls} MCP calls, ` +
        `${errors.directCalls} of ${directMany.samples.length + errors.directCalls} direct calls; ` +
        `why: ${JSON.stringify(errors.why)}; opening ${SESSIONS} sessions at once took ${round(opened.wallMs, 0)} ms; sandbox ${stack.sandboxMode}; ${cpus().length} CPUs, load ${loadBefore[0]} -> ${round(loadavg()[0] ?? 0, 2)}`,
    );
    const out = join(ROOT, "bench-results");
    mkdirSync(out, { recursive: true });
    writeFileSync(
      join(out, "mcp.json"),
      `${JSON.stringify(
        {
          at: new Date().toISOString(),
          sandbox: stack.sandboxMode,
          cpus: cpus().length,
          loadAverage: { before: loadBefore, after: loadavg().map((x) => round(x, 2)) },
          rows,
          detail: {
            directMs,
            mcpMs,
            cliMs,
            sessions: { mcp: mm, direct: dm, openWallMs: round(opened.wallMs, 1) },
          },
          errors,
        },
        null,
        2,
      )}\n`,
    );
  } finally {
    await Promise.all(sessions.map((s) => s.close().catch(() => {})));
    kernel.close();
    await stack.close();
    rmSync(work, { recursive: true, force: true });
  }
}

runBench(main);
