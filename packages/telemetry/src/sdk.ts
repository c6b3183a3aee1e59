/**
 * The OpenTelemetry SDK side, imported only when tracing is on (so a process without an endpoint loads
 * none of it). `startNodeSdk` (@opentelemetry/sdk-node) sets up the process: the AsyncLocalStorage
 * context manager, the propagators (OTEL_PROPAGATORS, default W3C tracecontext + baggage) and its
 * diagnostics (OTEL_LOG_LEVEL, default error; failed exports are said once a minute, export-errors.ts); metrics and logs stay Prometheus and pino (no OpenTelemetry
 * metric reader or log processor is started). Each service then gets its own TracerProvider with its own
 * resource (`service.name`), so `gatehouse dev`, which runs every service in one process, reports each
 * under its own name. Every provider exports through its own bounded batch span processor and OTLP
 * exporter (OTEL_EXPORTER_OTLP_* read by the exporter); spans that cannot be exported are counted.
 */
import { randomUUID } from "node:crypto";
import type { Tracer } from "@opentelemetry/api";
import { OTLPTraceExporter as GrpcExporter } from "@opentelemetry/exporter-trace-otlp-grpc";
import { OTLPTraceExporter as JsonExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { OTLPTraceExporter as ProtoExporter } from "@opentelemetry/exporter-trace-otlp-proto";
import {
  defaultResource,
  detectResources,
  hostDetector,
  processDetector,
  type Resource,
  resourceAttributesEnvDetector,
  resourceFromAttributes,
} from "@opentelemetry/resources";
import { startNodeSdk } from "@opentelemetry/sdk-node";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  type Sampler,
  type SpanExporter,
  type SpanProcessor,
  TraceIdRatioBasedSampler,
  TracerProvider,
} from "@opentelemetry/sdk-trace";
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import type { TracingConfig } from "./config.ts";
import { type DroppedSpans, droppedSpansMeterProvider } from "./dropped-spans.ts";
import { installExportErrorHandler } from "./export-errors.ts";

/** One service's tracing pipeline. */
export interface ServicePipeline {
  tracer: Tracer;
  /** Its batch processor: also where spans made elsewhere for this service (Temporal workflow spans) go. */
  processor: SpanProcessor;
  resource: Resource;
  /** Exports what is queued, then stops. */
  shutdown(): Promise<void>;
}

/** The process's SDK. */
export interface Sdk {
  /** A pipeline for `serviceName` (a new provider, processor and exporter). */
  pipeline(serviceName: string, dropped: DroppedSpans): ServicePipeline;
  /** Stops the process-wide SDK parts (after the pipelines). */
  shutdown(): Promise<void>;
}

function sampler(config: TracingConfig): Sampler {
  const ratio = () => new TraceIdRatioBasedSampler(config.samplerRatio);
  switch (config.sampler) {
    case "always_on":
      return new AlwaysOnSampler();
    case "always_off":
      return new AlwaysOffSampler();
    case "traceidratio":
      return ratio();
    case "parentbased_always_off":
      return new ParentBasedSampler({ root: new AlwaysOffSampler() });
    case "parentbased_traceidratio":
      return new ParentBasedSampler({ root: ratio() });
    default:
      return new ParentBasedSampler({ root: new AlwaysOnSampler() });
  }
}

function exporter(config: TracingConfig): SpanExporter {
  switch (config.protocol) {
    case "grpc":
      return new GrpcExporter();
    case "http/json":
      return new JsonExporter();
    default:
      return new ProtoExporter();
  }
}

/** Starts the process-wide SDK parts (see module doc). */
export function startSdk(config: TracingConfig): Sdk {
  const node = startNodeSdk({
    // The SDK's own diagnostics; its "dropped N spans" warnings are what the dropped-span metric counts.
    logLevel: process.env.OTEL_LOG_LEVEL ?? "error",
    // Spans go through the per-service providers below; metrics and logs are not OpenTelemetry's here.
    spanProcessors: [],
    metricReaders: [],
    logRecordProcessors: [],
    resourceDetectors: [],
    instrumentations: [],
  });
  installExportErrorHandler(config.endpoint);
  const base = defaultResource().merge(
    detectResources({ detectors: [processDetector, hostDetector, resourceAttributesEnvDetector] }),
  );
  const shared = sampler(config);
  return {
    pipeline(serviceName, dropped) {
      const resource = base.merge(
        resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName, "service.instance.id": randomUUID() }),
      );
      const processor = new BatchSpanProcessor({
        exporter: exporter(config),
        ...config.queue,
        selfObsMeterProvider: droppedSpansMeterProvider(dropped),
      });
      const provider = new TracerProvider({ resource, spanProcessors: [processor], sampler: shared });
      return {
        tracer: provider.getTracer("@gatehouse/telemetry"),
        processor,
        resource,
        shutdown: () => provider.shutdown(),
      };
    },
    shutdown: () => node.shutdown(),
  };
}
