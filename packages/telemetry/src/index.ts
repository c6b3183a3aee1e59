/**
 * OpenTelemetry tracing for every Gatehouse service (docs/observability.md): start it where a process
 * starts (`startTracing`), give each service its tracing (`serviceTracing`), and use it on gRPC clients
 * and servers, HTTP listeners, gatekeeper sessions and event-store appends. Off — and free — unless
 * OTEL_EXPORTER_OTLP_ENDPOINT is set. Temporal's interceptors are in `@gatehouse/telemetry/temporal`.
 */
export {
  InvalidTracingConfig,
  OTLP_PROTOCOLS,
  type OtlpProtocol,
  type QueueConfig,
  SAMPLERS,
  type SamplerName,
  type TracingConfig,
  tracingConfigFromEnv,
} from "./config.ts";
export { DROPPED_SPANS_METRIC, type DropReason } from "./dropped-spans.ts";
export { storeSystemOf, traceEventStoreAppends } from "./event-store.ts";
export { metadataSetter, rpcNaming } from "./grpc-client.ts";
export { metadataGetter } from "./grpc-server.ts";
export { setHttpRoute } from "./http-server.ts";
export {
  addLinksToActiveSpan,
  bindToActiveContext,
  currentTraceparent,
  linksTo,
  linkToSubmissions,
  spanContextOf,
  TRACEPARENT_PATTERN,
} from "./trace-context.ts";
export {
  type ProcessTracing,
  type ServiceTracing,
  type StartTracingOptions,
  serviceTracing,
  startServiceProcessTracing,
  startTracing,
  stopTracing,
  tracingEnabled,
} from "./tracing.ts";
