/**
 * Tracing of outgoing gRPC calls: a grpc-js client interceptor that makes one CLIENT span per call
 * (unary or stream, from the call's start to its status) as a child of the context active where the
 * call was made, and sends that span's W3C trace context (`traceparent`, `tracestate`) in the call's
 * metadata. A stream carries it once, at open: everything the server does for the stream is in the trace.
 */

import {
  status as grpcStatus,
  InterceptingCall,
  type Interceptor,
  type Metadata,
  type StatusObject,
} from "@grpc/grpc-js";
import {
  type Attributes,
  context,
  propagation,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";

/** Writes propagation fields into gRPC metadata. */
export const metadataSetter = {
  set(carrier: Metadata, key: string, value: string): void {
    carrier.set(key, value);
  },
};

/**
 * The span name and attributes of a gRPC method path ("/gatehouse.v1.Kernel/ExecuteCode"), per the
 * OpenTelemetry RPC conventions: name "gatehouse.v1.Kernel/ExecuteCode", rpc.service and rpc.method.
 */
export function rpcNaming(path: string): { name: string; attributes: Attributes } {
  const trimmed = path.startsWith("/") ? path.slice(1) : path;
  const slash = trimmed.lastIndexOf("/");
  const service = slash > 0 ? trimmed.slice(0, slash) : trimmed;
  const method = slash > 0 ? trimmed.slice(slash + 1) : "";
  return {
    name: trimmed,
    attributes: { "rpc.system": "grpc", "rpc.service": service, "rpc.method": method },
  };
}

/** Marks `span` with the call's gRPC status (an error status sets the span's status to ERROR). */
export function recordGrpcStatus(
  span: {
    setAttribute(k: string, v: number): unknown;
    setStatus(s: { code: SpanStatusCode; message?: string }): unknown;
  },
  code: number,
  details?: string,
): void {
  span.setAttribute("rpc.grpc.status_code", code);
  if (code !== grpcStatus.OK) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: `${grpcStatus[code] ?? code}: ${details ?? ""}` });
  }
}

/** A client interceptor tracing every call of the channel with `tracer` (see module doc). */
export function tracingClientInterceptor(tracer: Tracer): Interceptor {
  return (options, nextCall) => {
    const parent = context.active();
    const { name, attributes } = rpcNaming(options.method_definition.path);
    const span = tracer.startSpan(name, { kind: SpanKind.CLIENT, attributes }, parent);
    const callContext = trace.setSpan(parent, span);
    let ended = false;
    const end = (s: StatusObject) => {
      if (ended) return;
      ended = true;
      recordGrpcStatus(span, s.code, s.details);
      span.end();
    };
    return new InterceptingCall(nextCall(options), {
      start(metadata, _listener, next) {
        propagation.inject(callContext, metadata, metadataSetter);
        // Only the status is intercepted; grpc-js passes the other events through unchanged.
        next(metadata, {
          onReceiveStatus(s, nextStatus) {
            end(s);
            nextStatus(s);
          },
        });
      },
    });
  };
}
