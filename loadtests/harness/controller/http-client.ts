/**
 * The requests VUs ask for, made with undici on the controller's event loop. Each VU has its own
 * connection pool (an undici Agent), as each k6 VU has its own. The timeout bounds the whole request,
 * body included; when it fires the result is k6's: status 0, error "request timeout", error_code 1050.
 * Other failures are status 0 with the error's message and error_code 1000 (k6's generic code; the
 * harness does not reproduce k6's finer network codes).
 */
import { performance } from "node:perf_hooks";
import { Agent, request } from "undici";

/** What a VU's k6/http call sends (vu/modules/http.js). */
export interface HttpRequest {
  method: string;
  url: string;
  body: string | null;
  headers: Record<string, string>;
  timeoutMs: number;
  responseType: "text" | "none";
}

/** What the VU turns into a k6 Response. Timings in ms. */
export interface HttpResult {
  status: number;
  body: string | null;
  headers: Record<string, string>;
  timings: { duration: number; waiting: number; receiving: number };
  error: string;
  errorCode: number;
  url: string;
}

/** k6's error_code for a request that ran out of time. */
export const REQUEST_TIMEOUT = 1050;
/** k6's generic error_code. */
export const GENERIC_ERROR = 1000;

/** A header name in Go's canonical form, as k6 shows it: "mcp-session-id" → "Mcp-Session-Id". */
export function canonicalHeader(name: string): string {
  return name
    .toLowerCase()
    .split("-")
    .map((p) => (p ? (p[0] as string).toUpperCase() + p.slice(1) : p))
    .join("-");
}

/** A new connection pool for one VU. */
export function vuAgent(): Agent {
  return new Agent({ keepAliveTimeout: 60_000, headersTimeout: 0, bodyTimeout: 0 });
}

/**
 * Makes `req` through `agent`. Resolves "interrupted" when `interrupt` fires first (the iteration was
 * ended); never rejects.
 */
export async function perform(
  agent: Agent,
  req: HttpRequest,
  interrupt: AbortSignal,
): Promise<HttpResult | "interrupted"> {
  const timeout = new AbortController();
  const timer = setTimeout(() => timeout.abort(), req.timeoutMs);
  const signal = AbortSignal.any([timeout.signal, interrupt]);
  const began = performance.now();
  let headersAt = began;
  let status = 0;
  const headers: Record<string, string> = {};
  try {
    const res = await request(req.url, {
      method: req.method as "GET",
      headers: { "user-agent": "gatehouse-k6-test-harness", ...req.headers },
      body: req.body ?? undefined,
      signal,
      dispatcher: agent,
    });
    headersAt = performance.now();
    status = res.statusCode;
    for (const [k, v] of Object.entries(res.headers))
      if (v !== undefined) headers[canonicalHeader(k)] = Array.isArray(v) ? v.join(", ") : v;
    let body: string | null = null;
    if (req.responseType === "text") body = await res.body.text();
    else for await (const _ of res.body); // read and discard, as k6 does with responseType "none"
    const end = performance.now();
    return {
      status,
      body,
      headers,
      timings: { duration: end - began, waiting: headersAt - began, receiving: end - headersAt },
      error: "",
      errorCode: 0,
      url: req.url,
    };
  } catch (err) {
    if (interrupt.aborted) return "interrupted";
    const end = performance.now();
    const timedOut = timeout.signal.aborted;
    return {
      status: 0,
      body: null,
      headers: timedOut ? {} : headers,
      timings: {
        duration: end - began,
        waiting: (status ? headersAt : end) - began,
        receiving: status ? end - headersAt : 0,
      },
      error: timedOut ? "request timeout" : String((err as Error).message ?? err),
      errorCode: timedOut ? REQUEST_TIMEOUT : GENERIC_ERROR,
      url: req.url,
    };
  } finally {
    clearTimeout(timer);
  }
}
