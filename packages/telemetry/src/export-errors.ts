/**
 * What a failing export says, and how often: the OpenTelemetry SDK reports every failed or timed-out
 * export through its global error handler, which would print a stack trace every few seconds per
 * service while the receiver is down. This handler prints one line per kind of error and per minute,
 * naming the endpoint and the metric that counts what is lost.
 */
import { type ErrorHandler, setGlobalErrorHandler } from "@opentelemetry/core";

/** Quiet period per kind of error, ms. */
const QUIET_MS = 60_000;

/**
 * Installs the rate-limited handler for exports to `endpoint`; `write` receives each line (default:
 * stderr). Returns the handler (tests call it).
 */
export function installExportErrorHandler(
  endpoint: string,
  write: (line: string) => void = (line) => process.stderr.write(`${line}\n`),
): ErrorHandler {
  const lastSaid = new Map<string, number>();
  const handler: ErrorHandler = (err) => {
    const e = err as { name?: string; message?: string; code?: string } | string;
    const kind = typeof e === "string" ? "error" : (e.code ?? e.name ?? "error");
    const now = Date.now();
    if (now - (lastSaid.get(kind) ?? -Infinity) < QUIET_MS) return;
    lastSaid.set(kind, now);
    const text = typeof e === "string" ? e : `${e.name ?? "Error"}: ${e.message ?? ""}`;
    write(
      `tracing: exporting spans to ${endpoint} failed (${text}); requests are not affected, the spans are dropped and counted in gatehouse_tracing_spans_dropped_total (this message repeats at most once a minute)`,
    );
  };
  setGlobalErrorHandler(handler);
  return handler;
}
