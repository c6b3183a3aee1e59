/**
 * Tracing of incoming HTTP requests without require hooks: a wrapper for a Node `request` listener
 * (what a fastify `serverFactory` receives) that makes one SERVER span per request, continuing the
 * trace named by the request's `traceparent` header, and runs the listener — and every listener the
 * application adds to the request and response streams (body parsing, SSE) — in that span's context.
 * The span ends when the response finishes or the connection closes; a 5xx status marks it an error.
 * The route ("/api/workspaces/:ws/actions/:id/approve") is added by the application once it knows it
 * ({@link setHttpRoute}), so span names stay few.
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import {
  context,
  propagation,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";

type RequestListener = (req: IncomingMessage, res: ServerResponse) => void;

const spans = new WeakMap<IncomingMessage, Span>();

/** Reads propagation fields from request headers. */
const headerGetter = {
  keys: (carrier: IncomingMessage) => Object.keys(carrier.headers),
  get: (carrier: IncomingMessage, key: string) => carrier.headers[key.toLowerCase()],
};

/** Wraps `listener` so each request runs in its own SERVER span made with `tracer` (see module doc). */
export function traceHttpListener(tracer: Tracer, listener: RequestListener): RequestListener {
  return (req, res) => {
    const parent = propagation.extract(ROOT_CONTEXT, req, headerGetter);
    const method = req.method ?? "GET";
    const span = tracer.startSpan(
      method,
      {
        kind: SpanKind.SERVER,
        attributes: { "http.request.method": method, "url.path": (req.url ?? "/").split("?")[0] ?? "/" },
      },
      parent,
    );
    spans.set(req, span);
    const ctx = trace.setSpan(parent, span);
    let ended = false;
    const end = () => {
      if (ended) return;
      ended = true;
      span.setAttribute("http.response.status_code", res.statusCode);
      if (res.statusCode >= 500)
        span.setStatus({ code: SpanStatusCode.ERROR, message: `HTTP ${res.statusCode}` });
      span.end();
    };
    res.once("finish", end);
    res.once("close", end);
    context.bind(ctx, req);
    context.bind(ctx, res);
    context.with(ctx, () => listener(req, res));
  };
}

/**
 * Names the request's span after its route, e.g. "POST /mcp" with `http.route` "/mcp". Does nothing
 * when the request is not traced.
 */
export function setHttpRoute(req: IncomingMessage, route: string): void {
  const span = spans.get(req);
  if (!span) return;
  span.updateName(`${req.method ?? "GET"} ${route}`);
  span.setAttribute("http.route", route);
}
