/**
 * The skeleton every gatekeeper's unary gRPC handler shares: time the call, count it by method
 * and status code, map errors to gRPC statuses in one place (`toServiceError`), and log
 * unexpected errors without their message.
 *
 * ```ts
 * const deps = { metrics, logger };
 * const impl: GatekeeperServer = {
 *   prepareRevert: unaryHandler("PrepareRevert", deps, (req) => prepareRevert(req)),
 *   checkObserver: unaryHandler("CheckObserver", deps, async (req) => ({ allowed: false, reason: "A: ..." })),
 *   ...
 * };
 * ```
 */
import { type handleUnaryCall, type ServerUnaryCall, status } from "@grpc/grpc-js";
import { GatekeeperError } from "./errors.ts";
import { toServiceError } from "./grpc-status.ts";

/**
 * The metric handles `unaryHandler` records into. A prom-client `Counter<"method" | "code">` and
 * `Histogram<"method">` fit this shape (the kit does not depend on prom-client).
 */
export interface UnaryMetrics {
  /** Incremented once per call with the method name and the status code name ("OK", "NOT_FOUND", ...). */
  rpcs: { inc(labels: { method: string; code: string }): void };
  /** Started when the call arrives; the returned function is called when it is answered (seconds). */
  rpcSeconds: { startTimer(labels: { method: string }): () => unknown };
}

/** The logging `unaryHandler` needs: a pino `Logger` fits. */
export interface UnaryLogger {
  error(obj: object, msg?: string): void;
}

/** What `unaryHandler` uses besides the handler itself. */
export interface UnaryDeps {
  metrics: UnaryMetrics;
  logger: UnaryLogger;
}

/**
 * Wraps `fn` as a grpc-js unary handler.
 *
 * - `fn` resolving answers the call with its value and counts `code: "OK"`.
 * - `fn` rejecting or throwing synchronously answers with `toServiceError(err)`: a
 *   `GatekeeperError` keeps its message and gets the status of its `code`; anything else becomes
 *   INTERNAL with a generic message. The counter gets the status code's name.
 * - An error that is not a `GatekeeperError` is logged at error level as
 *   `{component: "grpc", event: "rpc.internal_error", method, errName, frames}`: its name and up
 *   to five stack frames, never its message (which may quote external data or secrets).
 *
 * @param method the RPC's name as proto spells it, e.g. "PrepareRevert" (a metric label).
 * @param fn the handler; gets the decoded request and the call (metadata, deadline).
 */
export function unaryHandler<Req, Res>(
  method: string,
  deps: UnaryDeps,
  fn: (req: Req, call: ServerUnaryCall<Req, Res>) => Promise<Res>,
): handleUnaryCall<Req, Res> {
  return (call, callback) => {
    const stop = deps.metrics.rpcSeconds.startTimer({ method });
    Promise.resolve()
      .then(() => fn(call.request, call))
      .then(
        (res) => {
          stop();
          deps.metrics.rpcs.inc({ method, code: "OK" });
          callback(null, res);
        },
        (err: unknown) => {
          stop();
          const se = toServiceError(err);
          deps.metrics.rpcs.inc({ method, code: status[se.code ?? status.INTERNAL] ?? "UNKNOWN" });
          logUnexpectedError(deps.logger, method, err);
          callback(se);
        },
      );
  };
}

/**
 * Logs an error that is not a `GatekeeperError` at error level as
 * `{component: "grpc", event: "rpc.internal_error", method, errName, frames}`: its name and up to
 * five stack frames, never its message (which may quote external data or secrets).
 */
export function logUnexpectedError(logger: UnaryLogger, method: string, err: unknown): void {
  if (err instanceof GatekeeperError) return;
  const e = err as Error | undefined;
  // Only the "    at ..." lines: a multi-line message would otherwise leak through.
  const frames = (e?.stack ?? "")
    .split("\n")
    .filter((line) => /^\s+at /.test(line))
    .slice(0, 5)
    .join("\n");
  logger.error(
    { component: "grpc", event: "rpc.internal_error", method, errName: e?.name, frames },
    "unexpected error",
  );
}
