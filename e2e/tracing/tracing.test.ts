/**
 * Issue 18's tracing acceptance, on a split stack (every service its own process, split-stack.ts: gateway,
 * kernel, sandbox runner, gatekeeper-mcp with the real memory MCP server, approval, worker, Temporal dev
 * server, NATS) exporting over OTLP to a real Jaeger (scripts/build-jaeger.sh), read back through its
 * query API:
 * - one execute_code over the gateway's /mcp, reading and writing through the memory gatekeeper, is one
 *   trace with spans from at least five services, every span's parent present (one root: the request);
 * - approving that write through the gateway's HTTP API is a trace reaching the worker's workflow and
 *   apply activity and the gatekeeper's ApplyActions, with span links back to the submission's span.
 */
import assert from "node:assert/strict";
import { mkdtempSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { DecisionResult } from "@gatehouse/gateway-contract";
import { type NatsServerProcess, startNatsServer } from "@gatehouse/live-notices/nats-server";
import { callUnary } from "@gatehouse/service-kit";
import { type Jaeger, type JaegerSpan, startJaeger } from "@gatehouse/telemetry/testing";
import { api } from "../support/gateway-client.ts";
import { connectMcpHttp, structuredOf, textOf } from "../support/mcp-http-client.ts";
import { type SplitDevToken, type SplitStack, startSplitStack } from "../support/split-stack.ts";

const require = createRequire(import.meta.url);
const MEMORY_SERVER = require.resolve("@modelcontextprotocol/server-memory/dist/index.js");
/** Deadline of every wait on a condition: nine processes share 2 busy cores in CI. */
const DEADLINE_MS = 180_000;
const TOKENS: SplitDevToken[] = [
  { token: "alice-approver-token-0001", subject: "alice", roles: ["approver"] },
];
const ALICE = "alice-approver-token-0001";

const dir = mkdtempSync(join(tmpdir(), "gatehouse-tracing-"));
let jaeger: Jaeger | undefined;
let nats: NatsServerProcess | undefined;
let stack: SplitStack | undefined;
let gateway: string;
let ws: string;
/** What the first test leaves for the second: the write's action id and the execute_code trace. */
let actionId: number | undefined;
let executeTrace: JaegerSpan[] = [];

/** Restores the environment the test changed for the service processes. */
const savedEnv: Record<string, string | undefined> = {};
function setEnv(vars: Record<string, string>): void {
  for (const [k, v] of Object.entries(vars)) {
    savedEnv[k] = process.env[k];
    process.env[k] = v;
  }
}

before(async () => {
  jaeger = await startJaeger();
  nats = await startNatsServer();
  // Every service process inherits these (split-stack.ts passes process.env on): OTLP/HTTP to Jaeger, exported
  // every 200 ms instead of 5 s so the test does not wait for batches.
  setEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpHttpEndpoint, OTEL_BSP_SCHEDULE_DELAY: "200" });
  stack = await startSplitStack(
    {
      memory: {
        command: process.execPath,
        args: [MEMORY_SERVER],
        env: { MEMORY_FILE_PATH: join(dir, "memory.jsonl") },
        vetted: true,
      },
    },
    { dir, natsUrl: nats.url, gateways: 1, devTokens: TOKENS },
  );
  gateway = stack.gatewayUrls[0] as string;
  const { kernel } = stack;
  ws = (
    await callUnary(kernel, kernel.createWorkspace, { name: "tracing", owner: "user:alice", members: [] })
  ).id;
  await callUnary(kernel, kernel.introduceResource, { workspaceId: ws, url: "mcp://memory", name: "" });
});

after(async () => {
  await stack?.close();
  await nats?.close();
  await jaeger?.close();
  for (const [k, v] of Object.entries(savedEnv)) {
    if (v === undefined) delete process.env[k];
    else process.env[k] = v;
  }
});

/** The spans of `trace` as "service:name", for failure messages. */
const describe = (trace: JaegerSpan[]) => trace.map((s) => `${s.service}:${s.name}`).join(", ");

/** Every span's parent is in the trace; exactly one root. */
function assertParentsIntact(trace: JaegerSpan[]): void {
  const ids = new Set(trace.map((s) => s.spanId));
  const roots = trace.filter((s) => !s.parentSpanId);
  assert.equal(
    roots.length,
    1,
    `one root span, got: ${roots.map((s) => `${s.service}:${s.name}`).join(", ")}`,
  );
  const orphans = trace.filter((s) => s.parentSpanId && !ids.has(s.parentSpanId));
  assert.deepEqual(
    orphans.map((s) => `${s.service}:${s.name}`),
    [],
    `spans whose parent is missing from the trace:\n  ${describe(trace)}`,
  );
}

test("one execute_code over /mcp is one trace: gateway → kernel → sandbox runner → gatekeeper → approval → event store", async () => {
  assert.ok(stack && jaeger);
  const mcp = await connectMcpHttp(gateway, ws, ALICE);
  let result: unknown;
  const t0 = performance.now();
  try {
    result = await mcp.client.callTool(
      {
        name: "execute_code",
        arguments: {
          code: `export default async (env: any) => {
            const before = await env.MEMORY.read_graph({});
            const write = await env.MEMORY.create_entities({ entities: [{ name: "Traced", entityType: "test", observations: ["one"] }] });
            return { read: before.content.length, write };
          }`,
        },
      },
      undefined,
      { timeout: DEADLINE_MS },
    );
  } finally {
    await mcp.close();
  }
  console.log(`# execute_code over /mcp with tracing to Jaeger: ${(performance.now() - t0).toFixed(0)} ms`);
  assert.notEqual((result as { isError?: boolean }).isError, true, textOf(result));
  const submitted = structuredOf<{ submitted: Array<{ actionId: number }> }>(result).submitted;
  assert.equal(submitted.length, 1, textOf(result));
  actionId = submitted[0]?.actionId;

  const expected = [
    ["gateway", "POST /mcp"],
    ["gateway", "gatehouse.v1.Kernel/ExecuteCode"],
    ["kernel", "gatehouse.v1.Kernel/ExecuteCode"],
    ["kernel", "gatehouse.v1.SandboxRunner/Execute"],
    ["sandbox-runner", "gatehouse.v1.SandboxRunner/Execute"],
    ["kernel", "gatehouse.v1.Gatekeeper/OpenSession"],
    ["gatekeeper-mcp", "gatehouse.v1.Gatekeeper/OpenSession"],
    ["gatekeeper-mcp", "binding read_graph"],
    ["gatekeeper-mcp", "binding create_entities"],
    ["gatekeeper-mcp", "gatehouse.v1.ApprovalQueue/AuthorizeObservation"],
    ["approval", "gatehouse.v1.ApprovalQueue/AuthorizeObservation"],
    ["approval", "gatehouse.v1.ApprovalQueue/SubmitAction"],
    ["approval", "event-store append"],
    ["kernel", "event-store append"],
    // The write is awaited: the kernel suspends the turn (Temporal signal-with-start), whose handling in
    // the worker hangs from this span.
    ["kernel", "SignalWithStartWorkflow:awaitDecisionTurn"],
  ] as const;
  const has = (t: JaegerSpan[], [service, name]: readonly [string, string]) =>
    t.some((s) => s.service === service && s.name === name);
  executeTrace = await jaeger.waitForTrace(
    "gateway",
    "the execute_code trace with every expected span",
    (t) => has(t, ["kernel", "gatehouse.v1.Kernel/ExecuteCode"]) && expected.every((e) => has(t, e)),
    DEADLINE_MS,
  );
  const services = new Set(executeTrace.map((s) => s.service));
  console.log(`# execute_code trace: ${executeTrace.length} spans from ${[...services].sort().join(", ")}`);
  assert.ok(services.size >= 5, `spans from ${[...services].join(", ")}`);
  assertParentsIntact(executeTrace);
  const root = executeTrace.find((s) => !s.parentSpanId);
  assert.equal(`${root?.service}:${root?.name}`, "gateway:POST /mcp", "the request is the root");
  // The gatekeeper's binding calls are inside its session, and its approval calls inside the binding calls.
  const byId = new Map(executeTrace.map((s) => [s.spanId, s]));
  const chain = (s: JaegerSpan | undefined): string[] =>
    s ? [`${s.service}:${s.name}`, ...chain(s.parentSpanId ? byId.get(s.parentSpanId) : undefined)] : [];
  const submitServer = executeTrace.find(
    (s) => s.service === "approval" && s.name === "gatehouse.v1.ApprovalQueue/SubmitAction",
  );
  assert.deepEqual(chain(submitServer).slice(0, 4), [
    "approval:gatehouse.v1.ApprovalQueue/SubmitAction",
    "gatekeeper-mcp:gatehouse.v1.ApprovalQueue/SubmitAction",
    "gatekeeper-mcp:binding create_entities",
    "gatekeeper-mcp:gatehouse.v1.Gatekeeper/OpenSession",
  ]);
  assert.ok(
    chain(submitServer).includes("kernel:gatehouse.v1.Kernel/ExecuteCode"),
    chain(submitServer).join(" ← "),
  );
});

test("approving the write through the gateway is a trace through the workflow and the apply, linked to the submission", async () => {
  assert.ok(stack && jaeger);
  assert.ok(actionId !== undefined, "the first test submitted a write");
  const approved = await api<DecisionResult>(
    gateway,
    ALICE,
    "POST",
    `/api/workspaces/${ws}/actions/${actionId}/approve`,
    {},
  );
  assert.equal(approved.status, 200, JSON.stringify(approved.body));

  const submission = executeTrace.find(
    (s) => s.service === "approval" && s.name === "gatehouse.v1.ApprovalQueue/SubmitAction",
  ) as JaegerSpan;
  const expected = [
    ["gateway", `POST /api/workspaces/:ws/actions/:id/approve`],
    ["gateway", "gatehouse.v1.Decisions/Approve"],
    ["approval", "gatehouse.v1.Decisions/Approve"],
    ["approval", "SignalWithStartWorkflow:bindingRun"],
    ["worker", "StartActivity:applyNextRun"],
    ["worker", "RunActivity:applyNextRun"],
    ["worker", "gatehouse.v1.Gatekeeper/ApplyActions"],
    ["gatekeeper-mcp", "gatehouse.v1.Gatekeeper/ApplyActions"],
  ] as const;
  const has = (t: JaegerSpan[], [service, name]: readonly [string, string]) =>
    t.some((s) => s.service === service && s.name === name);
  // Spans whose parent is not in the trace. Only those under the binding run's workflow span may stay so:
  // it is exported when the run ends (it idles a minute for more approvals first).
  const orphansOf = (t: JaegerSpan[]) => {
    const ids = new Set(t.map((s) => s.spanId));
    return t.filter((s) => s.parentSpanId && !ids.has(s.parentSpanId));
  };
  const underOpenRun = (s: JaegerSpan) =>
    s.name.startsWith("StartActivity:") || s.name.startsWith("HandleSignal:");
  // Each service exports in its own batches, so a child may reach Jaeger before its parent: wait until
  // every other parent has arrived too.
  const approveTrace = await jaeger.waitForTrace(
    "gateway",
    "the approval trace through the workflow to the gatekeeper's apply, every parent but the open run's there",
    (t) => has(t, expected[2]) && expected.every((e) => has(t, e)) && orphansOf(t).every(underOpenRun),
    DEADLINE_MS,
  );
  console.log(
    `# approval trace: ${approveTrace.length} spans from ${[...new Set(approveTrace.map((s) => s.service))].sort().join(", ")}`,
  );
  assert.notEqual(approveTrace[0]?.traceId, submission.traceId, "the approval is a trace of its own");
  const linksOf = (service: string, name: string) =>
    approveTrace.find((s) => s.service === service && s.name === name)?.links ?? [];
  const toSubmission = { traceId: submission.traceId, spanId: submission.spanId };
  assert.deepEqual(
    linksOf("approval", "gatehouse.v1.Decisions/Approve"),
    [toSubmission],
    "Approve links to it",
  );
  assert.deepEqual(linksOf("worker", "RunActivity:applyNextRun"), [toSubmission], "the apply links to it");
  const orphans = orphansOf(approveTrace);
  assert.ok(
    orphans.every(underOpenRun),
    `only spans under the still-running workflow run may wait for their parent: ${describe(orphans)}`,
  );
});
