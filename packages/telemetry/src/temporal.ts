/**
 * Temporal tracing with @temporalio/interceptors-opentelemetry, so "approve → workflow → activity →
 * gatekeeper" is one trace: the clients that start and signal workflows send the active trace context
 * in Temporal headers (`temporalClientInterceptors`); the worker's workflows continue it (the workflow
 * interceptor module bundled with the workflow code, `temporalWorkflowInterceptorModules`) and its
 * activities run in spans continuing the workflow's (`temporalWorkerOptions`). Workflow spans are made
 * inside Temporal's workflow sandbox and reach the worker's export queue through a sink. With tracing
 * off every function returns nothing to add, and the interceptors package is not even loaded.
 */
import { createRequire } from "node:module";
import type { Span as ApiSpan, SpanContext } from "@opentelemetry/api";
import type { ReadableSpan } from "@opentelemetry/sdk-trace";
import type { WorkflowClientInterceptor } from "@temporalio/client";
import type { InjectedSinks, WorkerInterceptors } from "@temporalio/worker";
import type { ServicePipeline } from "./sdk.ts";
import type { ServiceTracing } from "./tracing.ts";

const require = createRequire(import.meta.url);

/**
 * Interceptors for a `@temporalio/client` Client (`interceptors` option): every workflow start, signal,
 * signal-with-start, query and update is a CLIENT span whose context travels in the workflow's headers.
 * Undefined when tracing is off.
 */
export async function temporalClientInterceptors(
  tracing: ServiceTracing,
): Promise<{ workflow: WorkflowClientInterceptor[] } | undefined> {
  if (!tracing.enabled) return undefined;
  const { OpenTelemetryWorkflowClientInterceptor } = await import("@temporalio/interceptors-opentelemetry");
  return { workflow: [new OpenTelemetryWorkflowClientInterceptor({ tracer: tracing.tracer })] };
}

/**
 * The workflow interceptor module(s) to bundle with the workflow code for tracing (`bundleWorkflowCode`'s
 * `workflowInterceptorModules`): workflow runs, signal handlers and activity schedules become spans, and
 * activities get the trace context in their headers. A bundle without them traces no workflow.
 */
export function temporalWorkflowInterceptorModules(): string[] {
  return [require.resolve("@temporalio/interceptors-opentelemetry/lib/workflow-interceptors")];
}

/**
 * The sinks a worker needs to run a bundle made with {@link temporalWorkflowInterceptorModules} while
 * tracing is off: the workflow spans' exporter sink, doing nothing.
 */
export function temporalNoopWorkflowSinks(): InjectedSinks<Record<string, never>> {
  return { exporter: { export: { fn: () => {} } } } as unknown as InjectedSinks<Record<string, never>>;
}

/**
 * Options for `Worker.create`: activity interceptors (each activity runs in a span continuing the
 * workflow's trace) and the sink through which the workflow sandbox's spans are exported as the worker's
 * service. Empty when tracing is off. The workflow bundle must include
 * {@link temporalWorkflowInterceptorModules} for the workflows' spans.
 */
export async function temporalWorkerOptions(tracing: ServiceTracing): Promise<{
  interceptors?: WorkerInterceptors;
  sinks?: InjectedSinks<Record<string, never>>;
}> {
  const pipeline = tracing.pipeline;
  if (!tracing.enabled || !pipeline) return {};
  const tracer = tracing.tracer;
  const {
    makeWorkflowExporter,
    OpenTelemetryActivityInboundInterceptor,
    OpenTelemetryActivityOutboundInterceptor,
  } = await import("@temporalio/interceptors-opentelemetry");
  return {
    interceptors: {
      activity: [
        (ctx) => ({
          inbound: new OpenTelemetryActivityInboundInterceptor(ctx, { tracer }),
          outbound: new OpenTelemetryActivityOutboundInterceptor(ctx),
        }),
      ],
    },
    sinks: {
      exporter: makeWorkflowExporter(
        workflowSpanProcessor(pipeline) as unknown as Parameters<typeof makeWorkflowExporter>[0],
        pipeline.resource as unknown as Parameters<typeof makeWorkflowExporter>[1],
      ),
    } as unknown as InjectedSinks<Record<string, never>>,
  };
}

/**
 * The span shape the interceptors package rebuilds from the workflow sandbox (OpenTelemetry JS SDK 1.x:
 * `parentSpanId`, `instrumentationLibrary`).
 */
interface WorkflowSpan {
  spanContext(): SpanContext;
  parentSpanId?: string;
  instrumentationLibrary?: { name: string; version?: string };
  [key: string]: unknown;
}

/**
 * A span processor taking the sandbox's spans, in the SDK 1.x shape, into `pipeline`'s batch processor
 * in the shape its exporter reads (`parentSpanContext`, `instrumentationScope`, this service's resource).
 */
function workflowSpanProcessor(pipeline: ServicePipeline) {
  return {
    onStart(_span: ApiSpan): void {},
    onEnd(span: WorkflowSpan): void {
      const sc = span.spanContext();
      const { parentSpanId, instrumentationLibrary, ...rest } = span;
      const converted = {
        ...rest,
        spanContext: () => sc,
        parentSpanContext: parentSpanId
          ? { traceId: sc.traceId, spanId: parentSpanId, traceFlags: sc.traceFlags, isRemote: false }
          : undefined,
        instrumentationScope: instrumentationLibrary ?? { name: "@temporalio/interceptor-workflow" },
        resource: pipeline.resource,
      } as unknown as ReadableSpan;
      pipeline.processor.onEnd(converted);
    },
    forceFlush: () => pipeline.processor.forceFlush(),
    shutdown: async () => {},
  };
}
