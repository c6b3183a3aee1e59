/**
 * Tracing in `gatehouse dev`'s one process: every service runs in this test process, started after
 * `startTracing` as the dev command does, and still each reports under its own service.name, so one
 * execute_code over /mcp is one trace with spans from at least five services and every parent present
 * (the split-stack acceptance is tracing.test.ts).
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { startTracing, stopTracing } from "@gatehouse/telemetry";
import { type Jaeger, type JaegerSpan, startJaeger } from "@gatehouse/telemetry/testing";
import { type Harness, startHarness } from "../support/harness.ts";
import { connectMcpHttp, textOf } from "../support/mcp-http-client.ts";

const DEADLINE_MS = 120_000;
let jaeger: Jaeger | undefined;
let h: Harness | undefined;

before(async () => {
  jaeger = await startJaeger();
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = jaeger.otlpHttpEndpoint;
  process.env.OTEL_BSP_SCHEDULE_DELAY = "200";
  assert.equal((await startTracing({ process: "gatehouse-dev" })).enabled, true);
  h = await startHarness();
});

after(async () => {
  await h?.close();
  await stopTracing(5000);
  await jaeger?.close();
  delete process.env.OTEL_EXPORTER_OTLP_ENDPOINT;
  delete process.env.OTEL_BSP_SCHEDULE_DELAY;
});

test("in one process each service keeps its own service.name, and execute_code is one trace across them", async () => {
  assert.ok(h && jaeger);
  const ws = await h.workspace("mcp://memory");
  const token = h.stack.devTokens.find((t) => t.subject === "dev-approver")?.token;
  const mcp = await connectMcpHttp(h.stack.addresses.gateway, ws, token);
  try {
    const r = await mcp.client.callTool(
      {
        name: "execute_code",
        arguments: {
          code: "export default async (env: any) => (await env.MEMORY.read_graph({})).content.length",
        },
      },
      undefined,
      { timeout: DEADLINE_MS },
    );
    assert.notEqual((r as { isError?: boolean }).isError, true, textOf(r));
  } finally {
    await mcp.close();
  }
  const expected = [
    ["gateway", "POST /mcp"],
    ["gateway", "gatehouse.v1.Kernel/ExecuteCode"],
    ["kernel", "gatehouse.v1.Kernel/ExecuteCode"],
    ["kernel", "gatehouse.v1.SandboxRunner/Execute"],
    ["sandbox-runner", "gatehouse.v1.SandboxRunner/Execute"],
    ["kernel", "gatehouse.v1.Gatekeeper/OpenSession"],
    ["gatekeeper-mcp", "gatehouse.v1.Gatekeeper/OpenSession"],
    ["gatekeeper-mcp", "binding read_graph"],
    ["gatekeeper-mcp", "gatehouse.v1.ApprovalQueue/AuthorizeObservation"],
    ["approval", "gatehouse.v1.ApprovalQueue/AuthorizeObservation"],
    ["approval", "event-store append"],
  ];
  // Spans arrive as each ends: wait until every expected one is in.
  const trace = await jaeger.waitForTrace(
    "gateway",
    "the execute_code trace with a span of every service",
    (t) => expected.every(([service, name]) => t.some((s) => s.service === service && s.name === name)),
    DEADLINE_MS,
  );
  const services = [...new Set(trace.map((s) => s.service))].sort();
  for (const s of ["approval", "gatekeeper-mcp", "gateway", "kernel", "sandbox-runner"])
    assert.ok(services.includes(s), `a span of ${s} in ${services.join(", ")}`);
  const ids = new Set(trace.map((s) => s.spanId));
  const roots = trace.filter((s: JaegerSpan) => !s.parentSpanId);
  assert.deepEqual(
    roots.map((s) => `${s.service}:${s.name}`),
    ["gateway:POST /mcp"],
  );
  assert.deepEqual(
    trace.filter((s) => s.parentSpanId && !ids.has(s.parentSpanId)).map((s) => s.name),
    [],
    "every parent is in the trace",
  );
  // Each service's /metrics registry shows its dropped-span counter (nothing dropped: Jaeger is live).
  const metrics = await h.stack.kernelMetrics.registry.metrics();
  assert.match(
    metrics,
    /^gatehouse_tracing_spans_dropped_total\{otel_service="kernel",reason="queue_full"\} 0$/m,
  );
  assert.match(
    metrics,
    /^gatehouse_tracing_spans_dropped_total\{otel_service="kernel",reason="export_failed"\} 0$/m,
  );
});
