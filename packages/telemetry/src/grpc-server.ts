/**
 * Tracing of incoming gRPC calls without require hooks: `traceGrpcService` wraps the implementation
 * object given to `server.addService`, so each handler runs inside a SERVER span whose parent is the
 * trace context the caller sent in its metadata (W3C `traceparent`). The span lasts from the call's
 * arrival to its status: a unary handler's callback, a stream's end, error or cancellation. A stream's
 * event listeners run in the span's context, so work a bidi stream does per message (a gatekeeper's
 * binding calls, the kernel's relayed frames) is part of the same trace.
 */

import { type Metadata, type ServiceDefinition, type ServiceError, status } from "@grpc/grpc-js";
import { context, propagation, ROOT_CONTEXT, SpanKind, type Tracer, trace } from "@opentelemetry/api";
import { recordGrpcStatus, rpcNaming } from "./grpc-client.ts";

/** Reads propagation fields from gRPC metadata. */
export const metadataGetter = {
  keys(carrier: Metadata): string[] {
    return Object.keys(carrier.getMap());
  },
  get(carrier: Metadata, key: string): string | string[] | undefined {
    const values = carrier.get(key).filter((v): v is string => typeof v === "string");
    return values.length === 0 ? undefined : values.length === 1 ? values[0] : values;
  },
};

type Handler = (call: CallLike, callback?: Callback) => unknown;
type Callback = (err: ServiceError | null, ...rest: unknown[]) => void;
interface CallLike {
  metadata: Metadata;
  on?(event: string, listener: (...args: unknown[]) => void): unknown;
  once?(event: string, listener: (...args: unknown[]) => void): unknown;
  pendingStatus?: { code: number; details?: string };
}

/**
 * Returns an object serving like `impl` whose handlers (the methods named in `definition`) each run in a SERVER span
 * made with `tracer` (see module doc). Other properties are kept as they are.
 */
export function traceGrpcService<I extends object>(
  tracer: Tracer,
  definition: ServiceDefinition,
  impl: I,
): I {
  // grpc-js looks handlers up by name, so an object inheriting from `impl` with the wrapped ones on top will do.
  const traced = Object.create(impl) as Record<string, unknown>;
  for (const [key, method] of Object.entries(definition)) {
    const original = (impl as Record<string, unknown>)[key];
    if (typeof original !== "function") continue;
    const { name, attributes } = rpcNaming(method.path);
    const streaming = method.requestStream || method.responseStream;
    traced[key] = function tracedHandler(call: CallLike, callback?: Callback): unknown {
      const parent = propagation.extract(ROOT_CONTEXT, call.metadata, metadataGetter);
      const span = tracer.startSpan(name, { kind: SpanKind.SERVER, attributes }, parent);
      const ctx = trace.setSpan(parent, span);
      let ended = false;
      const end = (code: number, details?: string) => {
        if (ended) return;
        ended = true;
        recordGrpcStatus(span, code, details);
        span.end();
      };
      let cb = callback;
      if (typeof callback === "function") {
        cb = (err, ...rest) => {
          end(
            err ? (typeof err.code === "number" ? err.code : status.UNKNOWN) : status.OK,
            err?.details ?? err?.message,
          );
          callback(err, ...rest);
        };
      }
      if (streaming || typeof callback !== "function") {
        // Listeners the handler adds run in the span's context, whatever async context emits the event.
        context.bind(ctx, call as unknown as NodeJS.EventEmitter);
        call.once?.("error", (e: unknown) => {
          const err = e as Partial<ServiceError>;
          end(typeof err.code === "number" ? err.code : status.UNKNOWN, err.details ?? err.message);
        });
        call.once?.("cancelled", () => end(status.CANCELLED, "the caller cancelled the call"));
        call.once?.("finish", () => end(call.pendingStatus?.code ?? status.OK, call.pendingStatus?.details));
        call.once?.("close", () => end(call.pendingStatus?.code ?? status.OK, call.pendingStatus?.details));
      }
      try {
        return context.with(ctx, () => (original as Handler).call(impl, call, cb));
      } catch (err) {
        end(status.UNKNOWN, (err as Error).message);
        throw err;
      }
    };
  }
  return traced as I;
}
