/**
 * A real OTLP receiver for tests: the Jaeger binary that scripts/build-jaeger.sh builds from the Go module
 * proxy, started on loopback ports chosen free, storing traces in memory, and read back through its HTTP
 * query API. Tests wait for what they expect with {@link Jaeger.waitForTrace} (polling with a deadline).
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { freePort, waitForPort, waitUntil } from "@gatehouse/service-kit";

const ROOT = resolve(import.meta.dirname, "../../../..");

/** Where scripts/build-jaeger.sh puts the binary (it prints the path). */
export function jaegerBinary(): string {
  return execFileSync("bash", [join(ROOT, "scripts/build-jaeger.sh"), "--print-path"], {
    encoding: "utf8",
  }).trim();
}

/** One span as Jaeger's query API returns it, with its service and parent resolved. */
export interface JaegerSpan {
  traceId: string;
  spanId: string;
  /** The parent span's id (a CHILD_OF reference), or undefined for a root span. */
  parentSpanId?: string;
  name: string;
  /** `service.name` of the span's resource. */
  service: string;
  /** Span links (FOLLOWS_FROM references): the spans this one points to, in this trace or another. */
  links: Array<{ traceId: string; spanId: string }>;
  /** Tags (attributes), by key. */
  tags: Record<string, unknown>;
  /** Start time, µs since the epoch. */
  startTime: number;
}

interface RawTrace {
  traceID: string;
  spans: Array<{
    traceID: string;
    spanID: string;
    operationName: string;
    references?: Array<{ refType: string; traceID: string; spanID: string }>;
    processID: string;
    tags?: Array<{ key: string; value: unknown }>;
    startTime: number;
  }>;
  processes: Record<string, { serviceName: string }>;
}

function spansOf(raw: RawTrace): JaegerSpan[] {
  return raw.spans.map((s) => {
    const refs = s.references ?? [];
    const parent = refs.find((r) => r.refType === "CHILD_OF" && r.traceID === s.traceID);
    return {
      traceId: s.traceID,
      spanId: s.spanID,
      ...(parent ? { parentSpanId: parent.spanID } : {}),
      name: s.operationName,
      service: raw.processes[s.processID]?.serviceName ?? "",
      links: refs.filter((r) => r !== parent).map((r) => ({ traceId: r.traceID, spanId: r.spanID })),
      tags: Object.fromEntries((s.tags ?? []).map((t) => [t.key, t.value])),
      startTime: s.startTime,
    };
  });
}

/** A running Jaeger. */
export interface Jaeger {
  /** OTLP/HTTP endpoint for OTEL_EXPORTER_OTLP_ENDPOINT, "http://127.0.0.1:<port>". */
  otlpHttpEndpoint: string;
  /** OTLP/gRPC endpoint, "http://127.0.0.1:<port>". */
  otlpGrpcEndpoint: string;
  /** Query API base URL. */
  queryUrl: string;
  /** Services that reported spans. */
  services(): Promise<string[]>;
  /** The traces with a span of `service` (most recent first, at most `limit`, default 100). */
  traces(service: string, limit?: number): Promise<JaegerSpan[][]>;
  /** One trace's spans; [] while Jaeger does not have it. */
  trace(traceId: string): Promise<JaegerSpan[]>;
  /**
   * Polls `traces(service)` until `accept` returns a trace it likes (it may return false while spans are
   * still arriving), for at most `timeoutMs`. @throws Error naming `what` and what was seen at the deadline.
   */
  waitForTrace(
    service: string,
    what: string,
    accept: (spans: JaegerSpan[]) => boolean,
    timeoutMs?: number,
  ): Promise<JaegerSpan[]>;
  /** Jaeger's last output, for failure messages. */
  log(): string;
  /** Stops Jaeger (SIGTERM, then SIGKILL after 5 s) and removes its config. */
  close(): Promise<void>;
}

/**
 * Starts Jaeger with in-memory storage on free loopback ports; resolves once its OTLP and query ports
 * listen. @throws Error saying how to build it when the binary is missing, or with its output when it
 * exits or does not listen within `timeoutMs` (default 60 s).
 */
export async function startJaeger(timeoutMs = 60_000): Promise<Jaeger> {
  const binary = jaegerBinary();
  if (!existsSync(binary)) {
    throw new Error(
      `Jaeger is not built (${binary} is missing): run bash scripts/build-jaeger.sh (npm run setup does it)`,
    );
  }
  const [grpcPort, httpPort, queryPort, queryGrpcPort] = await Promise.all([
    freePort(),
    freePort(),
    freePort(),
    freePort(),
  ]);
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-jaeger-"));
  const config = join(dir, "config.yaml");
  writeFileSync(
    config,
    `service:
  extensions: [jaeger_storage, jaeger_query]
  pipelines:
    traces:
      receivers: [otlp]
      processors: [batch]
      exporters: [jaeger_storage_exporter]
  telemetry:
    metrics:
      level: none
    logs:
      level: warn
extensions:
  jaeger_query:
    storage:
      traces: memstore
    http:
      endpoint: 127.0.0.1:${queryPort}
    grpc:
      endpoint: 127.0.0.1:${queryGrpcPort}
  jaeger_storage:
    backends:
      memstore:
        memory:
          max_traces: 10000
receivers:
  otlp:
    protocols:
      grpc:
        endpoint: 127.0.0.1:${grpcPort}
      http:
        endpoint: 127.0.0.1:${httpPort}
processors:
  batch:
    timeout: 100ms
exporters:
  jaeger_storage_exporter:
    trace_storage: memstore
`,
  );
  let output = "";
  // Jaeger traces itself with OpenTelemetry's Go SDK, by default to localhost:4317 (a port that is not
  // ours): off, and pointed at its own receiver should a part of it ignore that.
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith("OTEL_")));
  const child: ChildProcess = spawn(binary, ["--config", config], {
    stdio: ["ignore", "pipe", "pipe"],
    env: {
      ...env,
      OTEL_SDK_DISABLED: "true",
      OTEL_TRACES_EXPORTER: "none",
      OTEL_METRICS_EXPORTER: "none",
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${grpcPort}`,
    },
  });
  const keep = (d: Buffer) => {
    output = (output + d.toString()).slice(-20_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = () =>
    child.exitCode !== null || child.signalCode !== null
      ? `jaeger exited with ${child.exitCode ?? child.signalCode}`
      : undefined;
  const close = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      const gone = new Promise<void>((r) => child.once("exit", () => r()));
      child.kill("SIGTERM");
      const force = setTimeout(() => child.kill("SIGKILL"), 5000);
      await gone;
      clearTimeout(force);
    }
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    for (const [port, name] of [
      [httpPort, "jaeger otlp/http"],
      [grpcPort, "jaeger otlp/grpc"],
      [queryPort, "jaeger query"],
    ] as const) {
      await waitForPort(port as number, { name, timeoutMs, stillRunning: exited });
    }
  } catch (err) {
    await close();
    throw new Error(`${(err as Error).message}; its output:\n${output.slice(-3000)}`);
  }
  const queryUrl = `http://127.0.0.1:${queryPort}`;
  const get = async <T>(path: string): Promise<T | undefined> => {
    const res = await fetch(`${queryUrl}${path}`, { signal: AbortSignal.timeout(10_000) });
    if (res.status === 404) return undefined;
    if (!res.ok) throw new Error(`jaeger query ${path}: HTTP ${res.status} ${await res.text()}`);
    return (await res.json()) as T;
  };
  const traces = async (service: string, limit = 100) => {
    const body = await get<{ data: RawTrace[] | null }>(
      `/api/traces?service=${encodeURIComponent(service)}&limit=${limit}&lookback=1h`,
    );
    return (body?.data ?? []).map(spansOf);
  };
  return {
    otlpHttpEndpoint: `http://127.0.0.1:${httpPort}`,
    otlpGrpcEndpoint: `http://127.0.0.1:${grpcPort}`,
    queryUrl,
    async services() {
      return (await get<{ data: string[] | null }>("/api/services"))?.data ?? [];
    },
    traces,
    async trace(traceId) {
      const body = await get<{ data: RawTrace[] | null }>(`/api/traces/${traceId}`);
      return body?.data?.[0] ? spansOf(body.data[0]) : [];
    },
    async waitForTrace(service, what, accept, waitMs = 120_000) {
      let last: JaegerSpan[][] = [];
      let found: JaegerSpan[] | undefined;
      await waitUntil(
        what,
        async () => {
          last = await traces(service);
          found = last.find(accept);
          return found !== undefined;
        },
        { timeoutMs: waitMs, intervalMs: 250 },
      ).catch((err: Error) => {
        const seen = last
          .slice(0, 5)
          .map((t) => t.map((s) => `${s.service}:${s.name}`).join(", "))
          .join("\n  ");
        throw new Error(`${err.message}; the last traces of ${service} seen:\n  ${seen || "(none)"}`);
      });
      return found as JaegerSpan[];
    },
    log: () => output,
    close,
  };
}
