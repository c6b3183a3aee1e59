/**
 * Tracing of a Gatehouse process and of each service in it.
 *
 * - `startTracing` is called once where a process starts (a service's `main.ts`, `gatehouse dev`). With
 *   no OTLP endpoint in the environment it does nothing at all: no SDK is loaded, nothing is exported,
 *   and every `ServiceTracing` is the no-op one (handlers and clients are left exactly as they were).
 * - `serviceTracing(name)` is what a service's start function asks for: its tracer (spans carry
 *   `service.name` = name), its gRPC client options and server wrapper, its HTTP listener wrapper, its
 *   dropped-span counter for the service's /metrics registry. Services in one process (`gatehouse dev`)
 *   each get their own provider and resource; a process that runs a single service (split mode,
 *   Kubernetes) takes OTEL_SERVICE_NAME, when set, as that service's name.
 * - Export never blocks a request: spans wait in a bounded queue per service and leave in batches on a
 *   timer; when the receiver is slow, unreachable or refuses, the queue fills and further spans are
 *   dropped and counted (`gatehouse_tracing_spans_dropped_total`).
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import type { Interceptor, ServiceDefinition } from "@grpc/grpc-js";
import {
  type Attributes,
  type Link,
  type Span,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import type { Registry } from "prom-client";
import { type TracingConfig, tracingConfigFromEnv } from "./config.ts";
import { DroppedSpans } from "./dropped-spans.ts";
import { tracingClientInterceptor } from "./grpc-client.ts";
import { traceGrpcService } from "./grpc-server.ts";
import { traceHttpListener } from "./http-server.ts";
import { traceMethodCalls } from "./method-spans.ts";
import type { Sdk, ServicePipeline } from "./sdk.ts";

type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

/** One service's tracing (see module doc). Every method is a cheap pass-through when tracing is off. */
export interface ServiceTracing {
  /** The service's name as spans report it (`service.name`). */
  readonly service: string;
  /** False when the process does not trace: then nothing below changes anything. */
  readonly enabled: boolean;
  readonly tracer: Tracer;
  /** Shows `gatehouse_tracing_spans_dropped_total{otel_service=<this>}` on `registry` (only when enabled). */
  countDroppedSpansOn(registry: Registry): void;
  /**
   * Options to merge into a grpc-js client's options (`{...yours, ...grpcClientOptions()}`): an
   * interceptor making a CLIENT span per call and sending the trace context. `{}` when off.
   */
  grpcClientOptions(): { interceptors?: Interceptor[] };
  /** `impl` with each handler of `definition` run in a SERVER span (see grpc-server.ts); `impl` itself when off. */
  traceGrpcService<I extends object>(definition: ServiceDefinition, impl: I): I;
  /** An HTTP request listener run in a SERVER span per request (see http-server.ts); `listener` itself when off. */
  traceHttpListener(listener: RequestListener): RequestListener;
  /** `target` with each method call in a span `<prefix> <method>` (see method-spans.ts); `target` itself when off. */
  traceMethodCalls<T extends object>(target: T, prefix: string, attributes?: Attributes): T;
  /**
   * Runs `fn` inside an INTERNAL span `name` (child of the active span) with `attributes` and `links`;
   * an error thrown marks the span ERROR and is rethrown. When off, just runs `fn`.
   */
  inSpan<T>(
    name: string,
    fn: (span: Span) => Promise<T>,
    options?: { attributes?: Attributes; links?: Link[] },
  ): Promise<T>;
  /** The service's export pipeline (processor, resource), for spans made outside this tracer; undefined when off. */
  readonly pipeline: ServicePipeline | undefined;
}

/** Options of {@link startTracing}. */
export interface StartTracingOptions {
  /** The process's name: the service a split-mode process runs ("kernel"), or "gatehouse-dev". */
  process: string;
  /** True when the process runs exactly the one service named `process`: OTEL_SERVICE_NAME then renames it. */
  singleService?: boolean;
}

/** What {@link startTracing} found. */
export interface ProcessTracing {
  enabled: boolean;
  /** The settings in force; undefined when off. */
  config?: TracingConfig;
  /** One line for the start-up log, e.g. "tracing on: http/protobuf to http://127.0.0.1:4318, …" or "tracing off (…)". */
  summary: string;
}

interface Running {
  options: StartTracingOptions;
  config: TracingConfig;
  sdk: Sdk;
  services: Map<string, EnabledTracing>;
}

let running: Running | undefined;

/**
 * Starts tracing for this process when the environment asks for it (see module doc); idempotent.
 * @throws InvalidTracingConfig naming the variable when a tracing variable is set to something wrong.
 */
export async function startTracing(options: StartTracingOptions): Promise<ProcessTracing> {
  // process.env, the one place the OpenTelemetry exporters read their settings (headers, timeout) from too.
  const config = tracingConfigFromEnv(process.env);
  if (!config) {
    const why =
      process.env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true"
        ? "OTEL_SDK_DISABLED=true"
        : process.env.OTEL_TRACES_EXPORTER?.trim() === "none"
          ? "OTEL_TRACES_EXPORTER=none"
          : "set OTEL_EXPORTER_OTLP_ENDPOINT to export traces";
    return { enabled: false, summary: `tracing off (${why})` };
  }
  if (!running) {
    const { startSdk } = await import("./sdk.ts");
    running = { options, config, sdk: startSdk(config), services: new Map() };
  }
  const c = running.config;
  return {
    enabled: true,
    config: c,
    summary: `tracing on: ${c.protocol} to ${c.endpoint} (${c.endpointVariable}), sampler ${c.sampler}, queue ${c.queue.maxQueueSize} spans per service`,
  };
}

/**
 * Exports what every service has queued, then stops tracing; waits at most `timeoutMs` (default 2000)
 * so a dead receiver cannot hold up a shutdown. Safe to call when tracing is off.
 */
export async function stopTracing(timeoutMs = 2000): Promise<void> {
  const r = running;
  if (!r) return;
  running = undefined;
  const all = Promise.allSettled([...r.services.values()].map((s) => s.pipeline.shutdown())).then(() =>
    r.sdk.shutdown(),
  );
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([
    all.catch(() => undefined),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, timeoutMs);
      timer.unref();
    }),
  ]);
  clearTimeout(timer);
}

/** True while the process traces. */
export function tracingEnabled(): boolean {
  return running !== undefined;
}

/** The tracing of service `service` in this process: the no-op one unless {@link startTracing} turned tracing on. */
export function serviceTracing(service: string): ServiceTracing {
  const r = running;
  if (!r) return noopTracing(service);
  const name =
    r.options.singleService && service === r.options.process
      ? process.env.OTEL_SERVICE_NAME?.trim() || service
      : service;
  let t = r.services.get(name);
  if (!t) {
    const dropped = new DroppedSpans(name);
    t = new EnabledTracing(name, r.sdk.pipeline(name, dropped), dropped);
    r.services.set(name, t);
  }
  return t;
}

class EnabledTracing implements ServiceTracing {
  readonly enabled = true;
  readonly tracer: Tracer;
  private readonly interceptor: Interceptor;

  constructor(
    readonly service: string,
    readonly pipeline: ServicePipeline,
    readonly dropped: DroppedSpans,
  ) {
    this.tracer = pipeline.tracer;
    this.interceptor = tracingClientInterceptor(this.tracer);
  }

  countDroppedSpansOn(registry: Registry): void {
    this.dropped.attach(registry);
  }

  grpcClientOptions(): { interceptors: Interceptor[] } {
    return { interceptors: [this.interceptor] };
  }

  traceGrpcService<I extends object>(definition: ServiceDefinition, impl: I): I {
    return traceGrpcService(this.tracer, definition, impl);
  }

  traceHttpListener(listener: RequestListener): RequestListener {
    return traceHttpListener(this.tracer, listener);
  }

  traceMethodCalls<T extends object>(target: T, prefix: string, attributes?: Attributes): T {
    return traceMethodCalls(this.tracer, target, prefix, attributes);
  }

  inSpan<T>(
    name: string,
    fn: (span: Span) => Promise<T>,
    options: { attributes?: Attributes; links?: Link[] } = {},
  ): Promise<T> {
    return this.tracer.startActiveSpan(name, options, async (span) => {
      try {
        return await fn(span);
      } catch (err) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: (err as Error)?.name ?? "error" });
        throw err;
      } finally {
        span.end();
      }
    });
  }
}

const NOOP_TRACER = trace.getTracer("@gatehouse/telemetry/off");
const NON_RECORDING = trace.wrapSpanContext({
  traceId: "0".repeat(32),
  spanId: "0".repeat(16),
  traceFlags: 0,
});

function noopTracing(service: string): ServiceTracing {
  return {
    service,
    enabled: false,
    tracer: NOOP_TRACER,
    pipeline: undefined,
    countDroppedSpansOn: () => {},
    grpcClientOptions: () => ({}),
    traceGrpcService: (_definition, impl) => impl,
    traceHttpListener: (listener) => listener,
    traceMethodCalls: (target) => target,
    inSpan: (_name, fn) => fn(NON_RECORDING),
  };
}

/**
 * For a service's `main.ts`: starts tracing for a process that runs `service` alone (OTEL_SERVICE_NAME,
 * when set, renames it) and logs `{event: "tracing", ...}` saying whether it is on and where spans go.
 * A wrong tracing variable ends the process with status 2 and a message naming it, as a service's own
 * configuration errors do.
 */
export async function startServiceProcessTracing(
  service: string,
  logger: { info(obj: object, msg?: string): void },
): Promise<ProcessTracing> {
  try {
    const started = await startTracing({ process: service, singleService: true });
    logger.info({ event: "tracing", enabled: started.enabled }, started.summary);
    return started;
  } catch (err) {
    console.error(`invalid ${service} configuration:\n  ${(err as Error).message}`);
    process.exit(2);
  }
}
