/**
 * `npm run bench:tracing`: what tracing costs a request, and that a dead OTLP endpoint costs no more.
 * Three split stacks run at once (every service its own process, e2e/support/split-stack.ts), alike
 * but for tracing: off; on, exporting to a live Jaeger (scripts/build-jaeger.sh); on, exporting to a dead
 * endpoint (a port that accepts connections and never answers, so every export hangs until its timeout).
 * The same execute_code (a read through the memory MCP gatekeeper: gateway → kernel → sandbox runner →
 * gatekeeper → approval → event store) goes over each stack's /mcp, interleaved call by call so a busy
 * machine slows the three alike. Prints p50/p99 of each next to tracing off; writes
 * bench-results/tracing.json. Env: BENCH_TRACING_CALLS (default 60).
 */
import { mkdirSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { createServer, type Socket } from "node:net";
import { cpus, loadavg } from "node:os";
import { join, resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { connectMcpHttp, type McpHttp, textOf } from "@gatehouse/e2e/support/mcp-http-client";
import { type SplitDevToken, type SplitStack, startSplitStack } from "@gatehouse/e2e/support/split-stack";
import { startNatsServer } from "@gatehouse/live-notices/nats-server";
import { callUnary } from "@gatehouse/service-kit";
import { startJaeger } from "@gatehouse/telemetry/testing";
import { envInt, printTable, type Row, round, runBench, stats } from "./support.ts";

const ROOT = resolve(fileURLToPath(import.meta.url), "../..");
const require = createRequire(import.meta.url);
const MEMORY_SERVER = require.resolve("@modelcontextprotocol/server-memory/dist/index.js");
const TOKENS: SplitDevToken[] = [
  { token: "bench-approver-token-0001", subject: "bench", roles: ["approver"] },
];
const SNIPPET = "export default async (env: any) => (await env.MEMORY.read_graph({})).content.length";

type Mode = "off" | "live" | "dead";

runBench(async () => {
  const calls = envInt("BENCH_TRACING_CALLS", 60);
  const jaeger = await startJaeger();
  const sockets = new Set<Socket>();
  const blackhole = createServer((s) => {
    sockets.add(s);
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => blackhole.listen(0, "127.0.0.1", () => r()));
  const nats = await startNatsServer();
  const stacks = new Map<Mode, SplitStack>();
  const sessions = new Map<Mode, McpHttp>();
  try {
    const endpoints: Record<Mode, string | undefined> = {
      off: undefined,
      live: jaeger.otlpHttpEndpoint,
      dead: `http://127.0.0.1:${(blackhole.address() as { port: number }).port}`,
    };
    for (const mode of ["off", "live", "dead"] as const) {
      // Each stack's processes take the environment as it is when they start.
      if (endpoints[mode]) process.env.OTEL_EXPORTER_OTLP_ENDPOINT = endpoints[mode];
      else delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
      const began = performance.now();
      const stack = await startSplitStack(
        { memory: { command: process.execPath, args: [MEMORY_SERVER], vetted: true } },
        { natsUrl: nats.url, gateways: 1, devTokens: TOKENS },
      );
      stacks.set(mode, stack);
      console.log(`stack ${mode} started in ${Math.round(performance.now() - began)} ms`);
      const { kernel } = stack;
      const ws = (
        await callUnary(kernel, kernel.createWorkspace, { name: mode, owner: "user:bench", members: [] })
      ).id;
      await callUnary(kernel, kernel.introduceResource, { workspaceId: ws, url: "mcp://memory", name: "" });
      sessions.set(mode, await connectMcpHttp(stack.gatewayUrls[0] as string, ws, TOKENS[0]?.token));
    }
    delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
    const samples: Record<Mode, number[]> = { off: [], live: [], dead: [] };
    const warmup = 5;
    for (let i = 0; i < calls + warmup; i++) {
      for (const mode of ["off", "live", "dead"] as const) {
        const mcp = sessions.get(mode) as McpHttp;
        const began = performance.now();
        const r = await mcp.client.callTool(
          { name: "execute_code", arguments: { code: SNIPPET } },
          undefined,
          {
            timeout: 120_000,
          },
        );
        const ms = performance.now() - began;
        if ((r as { isError?: boolean }).isError)
          throw new Error(`${mode}: execute_code failed: ${textOf(r)}`);
        if (i >= warmup) samples[mode].push(ms);
      }
    }
    const traces = await jaeger.traces("gateway", 1000);
    const s = { off: stats(samples.off), live: stats(samples.live), dead: stats(samples.dead) };
    const rows: Row[] = (["live", "dead"] as const).flatMap((mode) =>
      (["p50", "p99"] as const).map((q) => ({
        id: `${mode}-${q}`,
        measurement: `execute_code over /mcp, tracing ${mode === "live" ? "to a live Jaeger" : "to a dead endpoint"} (${q})`,
        value: s[mode][q],
        baseline: `tracing off (${q})`,
        baselineValue: s.off[q],
        unit: "ms",
        ratio: round(s[mode][q] / s.off[q], 3),
      })),
    );
    printTable(rows);
    console.log(
      `traces of the live stack's gateway in Jaeger: ${traces.length}; ${calls} measured calls per stack`,
    );
    const out = join(ROOT, "bench-results");
    mkdirSync(out, { recursive: true });
    writeFileSync(
      join(out, "tracing.json"),
      `${JSON.stringify({ calls, stats: s, rows, jaegerTraces: traces.length, cpus: cpus().length, loadavg: loadavg() }, null, 2)}\n`,
    );
  } finally {
    for (const mcp of sessions.values()) await mcp.close().catch(() => {});
    for (const stack of stacks.values()) await stack.close().catch(() => {});
    await nats.close();
    for (const s of sockets) s.destroy();
    await new Promise<void>((r) => blackhole.close(() => r()));
    await jaeger.close();
  }
});
