/**
 * An unreachable OTLP endpoint never slows or fails a call: export is asynchronous and bounded, and the
 * spans that cannot leave are counted (`gatehouse_tracing_spans_dropped_total`). Measured in one run, the
 * same gRPC calls (unary Echo, through the real interceptor and server wrapper) are timed with tracing
 * off, on to a live Jaeger, and on to a dead endpoint that accepts connections and never answers (exports
 * hang until their timeout: the worst case) — interleaved call by call, so a busy machine slows all three
 * alike.
 */
import assert from "node:assert/strict";
import { createServer, type Server, type Socket } from "node:net";
import { after, before, test } from "node:test";
import { waitUntil } from "@gatehouse/service-kit";
import { Registry } from "prom-client";
import {
  DROPPED_SPANS_METRIC,
  type ServiceTracing,
  serviceTracing,
  startTracing,
  stopTracing,
} from "../src/index.ts";
import { type Jaeger, startJaeger } from "../src/testing/index.ts";
import { type EchoClient, echo, echoClient, serveEcho } from "./echo-service.ts";

let jaeger: Jaeger;
let blackhole: Server;
const sockets = new Set<Socket>();

before(async () => {
  jaeger = await startJaeger();
  blackhole = createServer((s) => {
    sockets.add(s); // accepted, never answered
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((r) => blackhole.listen(0, "127.0.0.1", () => r()));
});

after(async () => {
  await stopTracing(1000);
  for (const s of sockets) s.destroy();
  await new Promise<void>((r) => blackhole.close(() => r()));
  await jaeger?.close();
});

interface Setup {
  client: EchoClient;
  close(): Promise<void>;
}

async function setup(server: ServiceTracing, client: ServiceTracing): Promise<Setup> {
  const served = await serveEcho(server);
  const c = echoClient(served.port, client);
  await echo(c, "warm-up");
  return {
    client: c,
    close: async () => {
      c.close();
      await served.close();
    },
  };
}

function quantile(values: number[], q: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] as number;
}

async function dropped(registry: Registry, service: string, reason: string): Promise<number> {
  const metric = await registry.getSingleMetric(DROPPED_SPANS_METRIC)?.get();
  return (
    metric?.values.find((v) => v.labels.otel_service === service && v.labels.reason === reason)?.value ?? 0
  );
}

test("a dead OTLP endpoint neither slows nor fails calls, and the dropped spans are counted", async () => {
  // Off: tracing not started yet, so these are the plain client and server.
  const off = await setup(serviceTracing("svc-off"), serviceTracing("svc-off"));
  assert.equal(serviceTracing("svc-off").enabled, false);

  // Small bounded queues and short timeouts, so drops show within the test.
  Object.assign(process.env, {
    OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpHttpEndpoint,
    OTEL_BSP_SCHEDULE_DELAY: "50",
    OTEL_BSP_MAX_QUEUE_SIZE: "64",
    OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "32",
    OTEL_BSP_EXPORT_TIMEOUT: "1000",
    OTEL_EXPORTER_OTLP_TIMEOUT: "1000",
  });
  assert.equal((await startTracing({ process: "telemetry-test" })).enabled, true);
  // Each service's exporter takes the endpoint when the service's tracing is made: live Jaeger first…
  const live = await setup(serviceTracing("svc-live-server"), serviceTracing("svc-live-client"));
  // …then the dead endpoint for the next ones.
  const port = (blackhole.address() as { port: number }).port;
  process.env.OTEL_EXPORTER_OTLP_ENDPOINT = `http://127.0.0.1:${port}`;
  const deadServer = serviceTracing("svc-dead-server");
  const deadClient = serviceTracing("svc-dead-client");
  const registry = new Registry();
  deadServer.countDroppedSpansOn(registry);
  deadClient.countDroppedSpansOn(registry);
  const dead = await setup(deadServer, deadClient);

  const rounds = 400;
  const times = { off: [] as number[], live: [] as number[], dead: [] as number[] };
  try {
    for (let i = 0; i < rounds; i++) {
      for (const [name, s] of [
        ["off", off],
        ["live", live],
        ["dead", dead],
      ] as const) {
        const t0 = performance.now();
        assert.deepEqual(await echo(s.client, { i }), { i }, "every call answers");
        times[name].push(performance.now() - t0);
      }
    }
  } finally {
    await Promise.all([off.close(), live.close(), dead.close()]);
  }
  const summary = Object.fromEntries(
    Object.entries(times).map(([k, v]) => [k, { p50: quantile(v, 0.5), p95: quantile(v, 0.95) }]),
  ) as Record<keyof typeof times, { p50: number; p95: number }>;
  const ms = (n: number) => `${n.toFixed(3)} ms`;
  console.log(
    `# echo latency over ${rounds} interleaved rounds: ` +
      Object.entries(summary)
        .map(([k, v]) => `${k} p50 ${ms(v.p50)} p95 ${ms(v.p95)}`)
        .join("; "),
  );
  // The dead endpoint costs what tracing costs, no more: not the export's hang (1 s) nor its retries.
  // Generous bounds for a busy 2-core machine; a blocking export would take ≥ 1000 ms.
  assert.ok(
    summary.dead.p50 <= summary.off.p50 * 3 + 2,
    `dead-endpoint median ${ms(summary.dead.p50)} vs off ${ms(summary.off.p50)}`,
  );
  assert.ok(
    summary.dead.p95 <= summary.off.p95 * 3 + 20,
    `dead-endpoint p95 ${ms(summary.dead.p95)} vs off ${ms(summary.off.p95)}`,
  );
  assert.ok(summary.dead.p50 <= summary.live.p50 * 2 + 2, "a dead endpoint is no slower than a live one");

  // 400 spans per dead service against a queue of 64: many are refused at once, the rest time out.
  const counts = async () => {
    const c: Record<string, number> = {};
    for (const svc of ["svc-dead-client", "svc-dead-server"])
      for (const reason of ["queue_full", "export_failed"])
        c[`${svc}/${reason}`] = await dropped(registry, svc, reason);
    return c;
  };
  const total = (c: Record<string, number>, reason: string) =>
    Object.entries(c)
      .filter(([k]) => k.endsWith(reason))
      .reduce((n, [, v]) => n + v, 0);
  let last: Record<string, number> = {};
  await waitUntil(
    "spans dropped for a full queue and for failed exports",
    async () => {
      last = await counts();
      return total(last, "queue_full") > 0 && total(last, "export_failed") > 0;
    },
    { timeoutMs: 90_000, intervalMs: 100 },
  ).catch((err: Error) => {
    throw new Error(`${err.message}; counted: ${JSON.stringify(last)}`);
  });
  const text = await registry.metrics();
  assert.match(
    text,
    /gatehouse_tracing_spans_dropped_total\{otel_service="svc-dead-client",reason="queue_full"\} \d+/,
  );
  console.log(`# dropped (dead endpoint): ${JSON.stringify(last)}`);
  // The live service's spans did arrive.
  await jaeger.waitForTrace("svc-live-client", "a live Echo trace", (t) =>
    t.some((s) => s.service === "svc-live-server" && s.name === "test.Echo/Echo"),
  );
});
