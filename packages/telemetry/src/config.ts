/**
 * Whether a process traces, read from the standard OpenTelemetry environment variables and checked
 * at start-up. Tracing is on only when an OTLP endpoint is set (OTEL_EXPORTER_OTLP_TRACES_ENDPOINT or
 * OTEL_EXPORTER_OTLP_ENDPOINT); OTEL_SDK_DISABLED=true or OTEL_TRACES_EXPORTER=none turn it off again.
 * Everything else has the specification's defaults. A value that is set but wrong is an error naming
 * the variable and what it takes — never a silent fallback.
 */

/** The OTLP transports an exporter can use (OTEL_EXPORTER_OTLP_[TRACES_]PROTOCOL). */
export const OTLP_PROTOCOLS = ["http/protobuf", "http/json", "grpc"] as const;
export type OtlpProtocol = (typeof OTLP_PROTOCOLS)[number];

/** The samplers of OTEL_TRACES_SAMPLER that Gatehouse supports (the specification's built-in ones). */
export const SAMPLERS = [
  "always_on",
  "always_off",
  "traceidratio",
  "parentbased_always_on",
  "parentbased_always_off",
  "parentbased_traceidratio",
] as const;
export type SamplerName = (typeof SAMPLERS)[number];

/** The export queue of each service (OTEL_BSP_*): bounded, so a slow or dead receiver costs memory only up to it. */
export interface QueueConfig {
  /** Spans held at most; a span ending while it is full is dropped and counted (OTEL_BSP_MAX_QUEUE_SIZE, default 2048). */
  maxQueueSize: number;
  /** Spans per export request at most (OTEL_BSP_MAX_EXPORT_BATCH_SIZE, default 512, at most maxQueueSize). */
  maxExportBatchSize: number;
  /** Wait between exports, ms (OTEL_BSP_SCHEDULE_DELAY, default 5000). */
  scheduledDelayMillis: number;
  /** Longest an export may take before it counts as failed, ms (OTEL_BSP_EXPORT_TIMEOUT, default 30000). */
  exportTimeoutMillis: number;
}

/** Tracing settings of a process, when tracing is on. */
export interface TracingConfig {
  /** Where spans go (the exporters read the variable themselves; kept for logs and errors). */
  endpoint: string;
  /** The variable `endpoint` came from. */
  endpointVariable: "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT" | "OTEL_EXPORTER_OTLP_ENDPOINT";
  protocol: OtlpProtocol;
  queue: QueueConfig;
  sampler: SamplerName;
  /** The ratio of the *traceidratio samplers, 0 to 1 (OTEL_TRACES_SAMPLER_ARG, default 1). */
  samplerRatio: number;
}

/** A tracing variable is set to something it cannot take; the message names it and the fix. */
export class InvalidTracingConfig extends Error {
  override name = "InvalidTracingConfig";
}

function set(env: NodeJS.ProcessEnv, name: string): string | undefined {
  const v = env[name]?.trim();
  return v ? v : undefined;
}

function positiveInt(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const text = set(env, name);
  if (text === undefined) return fallback;
  const n = Number(text);
  if (!Number.isSafeInteger(n) || n <= 0) {
    throw new InvalidTracingConfig(`${name}="${text}" must be a positive whole number (default ${fallback})`);
  }
  return n;
}

/** The propagators OTEL_PROPAGATORS may name here (the SDK's built-in W3C ones, or none). */
const PROPAGATORS = ["tracecontext", "baggage", "none"] as const;

/**
 * OTEL_EXPORTER_OTLP_[TRACES_]HEADERS is a comma-separated list of key=value pairs (the OTLP exporter
 * specification; values may be percent-encoded). The message never repeats the value: it may hold a key.
 * @throws InvalidTracingConfig naming the variable and the position of the first malformed pair.
 */
function checkHeaders(env: NodeJS.ProcessEnv, name: string): void {
  const text = set(env, name);
  if (text === undefined) return;
  text.split(",").forEach((pair, i) => {
    const eq = pair.indexOf("=");
    if (eq <= 0 || !pair.slice(0, eq).trim()) {
      throw new InvalidTracingConfig(
        `${name}: pair ${i + 1} is not key=value (the variable takes key=value pairs separated by commas, e.g. api-key=abc,tenant=t1)`,
      );
    }
  });
}

/** @throws InvalidTracingConfig when OTEL_PROPAGATORS names a propagator other than PROPAGATORS. */
function checkPropagators(env: NodeJS.ProcessEnv): void {
  const text = set(env, "OTEL_PROPAGATORS");
  if (text === undefined) return;
  for (const p of text.split(",").map((x) => x.trim())) {
    if (!(PROPAGATORS as readonly string[]).includes(p)) {
      throw new InvalidTracingConfig(
        `OTEL_PROPAGATORS names "${p}", which Gatehouse does not support: use ${PROPAGATORS.join(", ")} (default tracecontext,baggage)`,
      );
    }
  }
}

/**
 * Reads the tracing settings from `env`.
 * @returns undefined when tracing is off (no endpoint, OTEL_SDK_DISABLED=true, OTEL_TRACES_EXPORTER=none).
 * @throws InvalidTracingConfig naming the variable when a set value is wrong (an endpoint that is not an
 *   http(s) URL, an unknown protocol, exporter or sampler, a ratio outside 0..1, a queue size that is not
 *   a positive whole number).
 */
export function tracingConfigFromEnv(env: NodeJS.ProcessEnv = process.env): TracingConfig | undefined {
  if (set(env, "OTEL_SDK_DISABLED")?.toLowerCase() === "true") return undefined;
  const exporter = set(env, "OTEL_TRACES_EXPORTER");
  if (exporter === "none") return undefined;
  if (exporter !== undefined && exporter !== "otlp") {
    throw new InvalidTracingConfig(
      `OTEL_TRACES_EXPORTER="${exporter}" is not supported: use otlp (the default) or none`,
    );
  }
  const tracesEndpoint = set(env, "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT");
  const endpointVariable = tracesEndpoint
    ? "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT"
    : "OTEL_EXPORTER_OTLP_ENDPOINT";
  const endpoint = tracesEndpoint ?? set(env, "OTEL_EXPORTER_OTLP_ENDPOINT");
  if (endpoint === undefined) return undefined;
  let url: URL | undefined;
  try {
    url = new URL(endpoint);
  } catch {
    url = undefined;
  }
  if (!url || (url.protocol !== "http:" && url.protocol !== "https:")) {
    throw new InvalidTracingConfig(
      `${endpointVariable}="${endpoint}" must be an http(s) URL of an OTLP receiver, e.g. http://127.0.0.1:4318 (http/protobuf) or http://127.0.0.1:4317 (grpc)`,
    );
  }
  const protocolVariable = set(env, "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL")
    ? "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL"
    : "OTEL_EXPORTER_OTLP_PROTOCOL";
  const protocol = set(env, protocolVariable) ?? "http/protobuf";
  if (!(OTLP_PROTOCOLS as readonly string[]).includes(protocol)) {
    throw new InvalidTracingConfig(
      `${protocolVariable}="${protocol}" must be one of ${OTLP_PROTOCOLS.join(", ")} (default http/protobuf)`,
    );
  }
  const sampler = set(env, "OTEL_TRACES_SAMPLER") ?? "parentbased_always_on";
  if (!(SAMPLERS as readonly string[]).includes(sampler)) {
    throw new InvalidTracingConfig(
      `OTEL_TRACES_SAMPLER="${sampler}" must be one of ${SAMPLERS.join(", ")} (default parentbased_always_on)`,
    );
  }
  const ratioText = set(env, "OTEL_TRACES_SAMPLER_ARG");
  const samplerRatio = ratioText === undefined ? 1 : Number(ratioText);
  if (!Number.isFinite(samplerRatio) || samplerRatio < 0 || samplerRatio > 1) {
    throw new InvalidTracingConfig(
      `OTEL_TRACES_SAMPLER_ARG="${ratioText}" must be a number from 0 to 1 (the share of traces kept)`,
    );
  }
  for (const name of ["OTEL_EXPORTER_OTLP_TIMEOUT", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT"]) {
    positiveInt(env, name, 10_000);
  }
  for (const name of ["OTEL_EXPORTER_OTLP_HEADERS", "OTEL_EXPORTER_OTLP_TRACES_HEADERS"]) {
    checkHeaders(env, name);
  }
  checkPropagators(env);
  const maxQueueSize = positiveInt(env, "OTEL_BSP_MAX_QUEUE_SIZE", 2048);
  const maxExportBatchSize = positiveInt(env, "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", 512);
  if (maxExportBatchSize > maxQueueSize) {
    throw new InvalidTracingConfig(
      `OTEL_BSP_MAX_EXPORT_BATCH_SIZE (${maxExportBatchSize}) must not exceed OTEL_BSP_MAX_QUEUE_SIZE (${maxQueueSize})`,
    );
  }
  return {
    endpoint,
    endpointVariable,
    protocol: protocol as OtlpProtocol,
    queue: {
      maxQueueSize,
      maxExportBatchSize,
      scheduledDelayMillis: positiveInt(env, "OTEL_BSP_SCHEDULE_DELAY", 5000),
      exportTimeoutMillis: positiveInt(env, "OTEL_BSP_EXPORT_TIMEOUT", 30_000),
    },
    sampler: sampler as SamplerName,
    samplerRatio,
  };
}
