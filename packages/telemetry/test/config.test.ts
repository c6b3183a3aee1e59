/**
 * Tracing is off unless an OTLP endpoint is set, honours the standard switches, and refuses wrong values
 * with a message naming the variable and what it takes.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { InvalidTracingConfig, serviceTracing, tracingConfigFromEnv } from "../src/index.ts";

const endpoint = { OTEL_EXPORTER_OTLP_ENDPOINT: "http://127.0.0.1:4318" };

test("tracing is off without an endpoint, with OTEL_SDK_DISABLED or OTEL_TRACES_EXPORTER=none", () => {
  assert.equal(tracingConfigFromEnv({}), undefined);
  assert.equal(tracingConfigFromEnv({ OTEL_EXPORTER_OTLP_ENDPOINT: "  " }), undefined);
  assert.equal(tracingConfigFromEnv({ ...endpoint, OTEL_SDK_DISABLED: "true" }), undefined);
  assert.equal(tracingConfigFromEnv({ ...endpoint, OTEL_TRACES_EXPORTER: "none" }), undefined);
});

test("the standard variables give the settings, with the specification's defaults", () => {
  assert.deepEqual(tracingConfigFromEnv(endpoint), {
    endpoint: "http://127.0.0.1:4318",
    endpointVariable: "OTEL_EXPORTER_OTLP_ENDPOINT",
    protocol: "http/protobuf",
    queue: {
      maxQueueSize: 2048,
      maxExportBatchSize: 512,
      scheduledDelayMillis: 5000,
      exportTimeoutMillis: 30000,
    },
    sampler: "parentbased_always_on",
    samplerRatio: 1,
  });
  const c = tracingConfigFromEnv({
    OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: "http://collector:4317",
    OTEL_EXPORTER_OTLP_PROTOCOL: "grpc",
    OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
    OTEL_TRACES_SAMPLER_ARG: "0.25",
    OTEL_BSP_MAX_QUEUE_SIZE: "100",
    OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "10",
  });
  assert.equal(c?.endpointVariable, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  assert.equal(c?.protocol, "grpc");
  assert.equal(c?.sampler, "parentbased_traceidratio");
  assert.equal(c?.samplerRatio, 0.25);
  assert.equal(c?.queue.maxQueueSize, 100);
});

test("a wrong value is refused, naming the variable", () => {
  const cases: Array<[Record<string, string>, RegExp]> = [
    [
      { OTEL_EXPORTER_OTLP_ENDPOINT: "collector:4318" },
      /OTEL_EXPORTER_OTLP_ENDPOINT="collector:4318" must be an http\(s\) URL/,
    ],
    [
      { ...endpoint, OTEL_EXPORTER_OTLP_PROTOCOL: "thrift" },
      /OTEL_EXPORTER_OTLP_PROTOCOL="thrift" must be one of/,
    ],
    [{ ...endpoint, OTEL_TRACES_EXPORTER: "zipkin" }, /OTEL_TRACES_EXPORTER="zipkin" is not supported/],
    [{ ...endpoint, OTEL_TRACES_SAMPLER: "sometimes" }, /OTEL_TRACES_SAMPLER="sometimes" must be one of/],
    [
      { ...endpoint, OTEL_TRACES_SAMPLER_ARG: "2" },
      /OTEL_TRACES_SAMPLER_ARG="2" must be a number from 0 to 1/,
    ],
    [
      { ...endpoint, OTEL_BSP_MAX_QUEUE_SIZE: "-5" },
      /OTEL_BSP_MAX_QUEUE_SIZE="-5" must be a positive whole number/,
    ],
    [
      { ...endpoint, OTEL_BSP_MAX_QUEUE_SIZE: "10", OTEL_BSP_MAX_EXPORT_BATCH_SIZE: "20" },
      /OTEL_BSP_MAX_EXPORT_BATCH_SIZE \(20\) must not exceed OTEL_BSP_MAX_QUEUE_SIZE \(10\)/,
    ],
    [
      { ...endpoint, OTEL_EXPORTER_OTLP_TIMEOUT: "-5" },
      /OTEL_EXPORTER_OTLP_TIMEOUT="-5" must be a positive whole number/,
    ],
    [
      { ...endpoint, OTEL_EXPORTER_OTLP_HEADERS: "api-key=secret,garbage" },
      /OTEL_EXPORTER_OTLP_HEADERS: pair 2 is not key=value/,
    ],
    [{ ...endpoint, OTEL_PROPAGATORS: "tracecontext,b3" }, /OTEL_PROPAGATORS names "b3"/],
  ];
  for (const [env, message] of cases) {
    assert.throws(
      () => tracingConfigFromEnv(env),
      (err: Error) => err instanceof InvalidTracingConfig && message.test(err.message),
    );
  }
});

test("a malformed headers variable is refused without repeating its value (it may hold a key)", () => {
  assert.throws(
    () => tracingConfigFromEnv({ ...endpoint, OTEL_EXPORTER_OTLP_HEADERS: "secret-token-abc" }),
    (err: Error) => err instanceof InvalidTracingConfig && !err.message.includes("secret-token-abc"),
  );
  assert.ok(tracingConfigFromEnv({ ...endpoint, OTEL_EXPORTER_OTLP_HEADERS: "api-key=a%3Db,tenant=t1" }));
});

test("without startTracing a service's tracing changes nothing", () => {
  const t = serviceTracing("kernel");
  assert.equal(t.enabled, false);
  assert.deepEqual(t.grpcClientOptions(), {});
  const impl = { echo() {} };
  assert.equal(t.traceGrpcService({}, impl), impl);
  const listener = () => {};
  assert.equal(t.traceHttpListener(listener), listener);
  assert.equal(t.traceMethodCalls(impl, "binding"), impl);
  assert.equal(t.pipeline, undefined);
});
