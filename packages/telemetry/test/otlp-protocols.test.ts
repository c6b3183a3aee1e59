/**
 * OTEL_EXPORTER_OTLP_PROTOCOL is honoured: with `grpc` the spans reach Jaeger's OTLP/gRPC receiver, and
 * OTEL_SERVICE_NAME renames the service of a single-service process (split mode).
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { serviceTracing, startTracing, stopTracing } from "../src/index.ts";
import { type Jaeger, startJaeger } from "../src/testing/index.ts";

let jaeger: Jaeger;

before(async () => {
  jaeger = await startJaeger();
  Object.assign(process.env, {
    OTEL_EXPORTER_OTLP_ENDPOINT: jaeger.otlpGrpcEndpoint,
    OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
    OTEL_BSP_SCHEDULE_DELAY: "100",
    OTEL_SERVICE_NAME: "kernel-eu-1",
  });
  const started = await startTracing({ process: "kernel", singleService: true });
  assert.match(
    started.summary,
    /^tracing on: grpc to http:\/\/127\.0\.0\.1:\d+ \(OTEL_EXPORTER_OTLP_ENDPOINT\)/,
  );
});

after(async () => {
  await stopTracing(5000);
  await jaeger?.close();
});

test("spans go over OTLP/gRPC, under the service name OTEL_SERVICE_NAME gives a one-service process", async () => {
  const kernel = serviceTracing("kernel");
  assert.equal(kernel.service, "kernel-eu-1");
  assert.equal(serviceTracing("approval").service, "approval", "only the process's own service is renamed");
  await kernel.inSpan("over grpc", async () => {});
  const trace = await jaeger.waitForTrace("kernel-eu-1", "a span over OTLP/gRPC", (t) =>
    t.some((s) => s.name === "over grpc"),
  );
  assert.equal(trace[0]?.service, "kernel-eu-1");
});
