/**
 * Spans reach a real OTLP receiver (Jaeger built by scripts/build-jaeger.sh) with their services and
 * parents intact: two services in one process each report under their own service.name; a unary call
 * and a bidi stream carry the trace context from client to server; what the server does per stream
 * message is in the same trace; event-store appends and binding method calls are spans; a link points
 * to another trace.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { trace } from "@opentelemetry/api";
import {
  currentTraceparent,
  linksTo,
  serviceTracing,
  startTracing,
  stopTracing,
  traceEventStoreAppends,
} from "../src/index.ts";
import { type Jaeger, type JaegerSpan, startJaeger } from "../src/testing/index.ts";
import { chat, echo, echoClient, serveEcho } from "./echo-service.ts";

let jaeger: Jaeger;

before(async () => {
  jaeger = await startJaeger();
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = jaeger.otlpHttpEndpoint;
  process.env.OTEL_BSP_SCHEDULE_DELAY = "100";
  const started = await startTracing({ process: "telemetry-test" });
  assert.equal(started.enabled, true, started.summary);
});

after(async () => {
  await stopTracing(5000);
  await jaeger?.close();
});

/** Every span's parent is in the trace, except the one root. */
function assertParentsIntact(spans: JaegerSpan[]): void {
  const ids = new Set(spans.map((s) => s.spanId));
  const roots = spans.filter((s) => !s.parentSpanId);
  assert.equal(roots.length, 1, `one root expected, got ${roots.map((s) => s.name).join(", ")}`);
  for (const s of spans) {
    if (s.parentSpanId)
      assert.ok(ids.has(s.parentSpanId), `${s.service}:${s.name} has its parent in the trace`);
  }
}

test("a unary call and a bidi stream are one trace across two services, with per-message work inside", async () => {
  const client = serviceTracing("svc-client");
  const server = serviceTracing("svc-server");
  const served = await serveEcho(server, (where) => {
    // Work a handler does per message: a child span of the call's SERVER span.
    server.tracer.startSpan(`work ${where}`).end();
  });
  const c = echoClient(served.port, client);
  try {
    await client.inSpan("root", async () => {
      await echo(c, { hello: "world" });
      await chat(c, 3);
    });
  } finally {
    c.close();
    await served.close();
  }
  const spans = await jaeger.waitForTrace(
    "svc-client",
    "the root trace with both calls and the per-message work",
    (t) =>
      t.some((s) => s.name === "root") &&
      t.filter((s) => s.name === "work chat").length === 3 &&
      t.some((s) => s.name === "work echo") &&
      t.filter((s) => s.name === "test.Echo/Chat").length === 2,
  );
  assertParentsIntact(spans);
  const byId = new Map(spans.map((s) => [s.spanId, s]));
  const parentOf = (s: JaegerSpan) => (s.parentSpanId ? byId.get(s.parentSpanId) : undefined);
  const serverChat = spans.find((s) => s.name === "test.Echo/Chat" && s.service === "svc-server");
  const clientChat = spans.find((s) => s.name === "test.Echo/Chat" && s.service === "svc-client");
  assert.ok(serverChat && clientChat, "CLIENT and SERVER spans of the stream");
  assert.equal(parentOf(serverChat)?.spanId, clientChat.spanId, "the server's span continues the client's");
  for (const w of spans.filter((s) => s.name === "work chat")) {
    assert.equal(parentOf(w)?.spanId, serverChat.spanId, "per-message work is inside the stream's span");
    assert.equal(w.service, "svc-server");
  }
  assert.equal(serverChat.tags["rpc.grpc.status_code"], 0);
  assert.equal(serverChat.tags["rpc.method"], "Chat");
});

test("appends and method calls are spans; a link points to another trace", async () => {
  const svc = serviceTracing("svc-store");
  let submittedAt: string | undefined;
  const store = traceEventStoreAppends(
    svc,
    {
      async append(_stream: string, events: Array<{ type: string }>, _expected: unknown) {
        submittedAt = currentTraceparent();
        return { nextExpectedRevision: events.length - 1 };
      },
    },
    "sqlite",
  );
  await svc.inSpan("submit", () => store.append("workspace-w1", [{ type: "ActionSubmitted" }], "any"));
  assert.match(submittedAt ?? "", /^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/, "the append ran inside its own span");
  class Target {
    async readThing(n: number) {
      return n + 1;
    }
  }
  const target = svc.traceMethodCalls(new Target(), "binding", { "gatehouse.binding": "THINGS" });
  assert.ok(target instanceof Target, "the traced object is still a Target");
  await svc.inSpan("approve", async () => {
    trace.getActiveSpan()?.addLinks(linksTo([submittedAt], { "gatehouse.link": "submission" }));
    assert.equal(await target.readThing(1), 2);
  });
  const submit = await jaeger.waitForTrace("svc-store", "the submit trace", (t) =>
    t.some((s) => s.name === "event-store append"),
  );
  const append = submit.find((s) => s.name === "event-store append") as JaegerSpan;
  assert.equal(append.tags["db.system.name"], "sqlite");
  assert.equal(append.tags["db.collection.name"], "workspace-w1");
  assert.equal(`00-${append.traceId}-${append.spanId}-01`, submittedAt);
  const approve = await jaeger.waitForTrace("svc-store", "the approve trace", (t) =>
    t.some((s) => s.name === "binding readThing"),
  );
  const root = approve.find((s) => s.name === "approve") as JaegerSpan;
  assert.deepEqual(
    root.links,
    [{ traceId: append.traceId, spanId: append.spanId }],
    "approve links to the append",
  );
  const call = approve.find((s) => s.name === "binding readThing") as JaegerSpan;
  assert.equal(call.parentSpanId, root.spanId);
  assert.equal(call.tags["gatehouse.binding"], "THINGS");
});
