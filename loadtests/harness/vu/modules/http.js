// @ts-check
/**
 * `k6/http` for the test harness: request, get, post, put, patch, del — synchronous, as in k6: the VU
 * blocks while the controller makes the request (undici, one connection pool per VU as k6 keeps one
 * per VU). Params: headers, timeout (ms or a duration string; default 60s; it bounds the whole
 * request, body included), tags, responseType ("text" or "none"). The Response: status, body,
 * headers (names in canonical form, e.g. "Mcp-Session-Id"), json(), timings (duration, waiting,
 * receiving, ms), error, error_code (1050 when the request timed out), url. Each request adds the
 * samples k6 adds: http_reqs, http_req_duration, http_req_waiting, http_req_receiving and
 * http_req_failed (statuses 200–399 are expected), tagged method, url, name, status, expected_response
 * (and error_code on an error). Anything else throws HarnessUnsupported naming it.
 */
import { call, emit, requireRunPhase } from "../runtime.js";
import { HarnessUnsupported, strictModule, strictObject } from "../unsupported.js";

const PARAMS = new Set(["headers", "timeout", "tags", "responseType"]);
const DEFAULT_TIMEOUT_MS = 60_000;

/**
 * A k6 duration ("1m30s", "500ms", "2.5s") or a number of milliseconds, as ms.
 * @param {unknown} value
 * @param {string} what
 */
function durationMs(value, what) {
  if (typeof value === "number" && Number.isFinite(value) && value >= 0) return value;
  if (typeof value === "string") {
    const re = /(\d+(?:\.\d+)?)(ms|h|m|s)/gy;
    let total = 0;
    let at = 0;
    for (let m = re.exec(value); m; m = re.exec(value)) {
      total +=
        Number(m[1]) * { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[/** @type {"ms"|"s"|"m"|"h"} */ (m[2])];
      at = re.lastIndex;
    }
    if (at === value.length && value.length > 0) return total;
  }
  throw new Error(
    `${what} must be a number of milliseconds or a duration such as "30s", got ${JSON.stringify(value)}`,
  );
}

/**
 * @typedef {{headers?: Record<string, string>, timeout?: string | number, tags?: Record<string, string>, responseType?: string}} Params
 */

/**
 * @param {string} method
 * @param {string} url
 * @param {unknown} body
 * @param {Params | undefined} params
 */
export function request(method, url, body, params) {
  requireRunPhase(`http.${method.toLowerCase()}`);
  if (typeof url !== "string")
    throw new HarnessUnsupported(
      `k6/http: the URL must be a string here (http.url templates are not implemented), got ${typeof url}`,
    );
  const p = params ?? {};
  for (const key of Object.keys(p))
    if (!PARAMS.has(key))
      throw new HarnessUnsupported(
        `k6/http: request parameter "${key}" is not implemented by the Gatehouse k6 test harness; it implements: ${[...PARAMS].join(", ")}`,
      );
  if (body !== null && body !== undefined && typeof body !== "string")
    throw new HarnessUnsupported(
      `k6/http: a ${typeof body} body (form encoding, files) is not implemented by the harness; send a string, e.g. JSON.stringify(...)`,
    );
  const responseType = p.responseType ?? "text";
  if (responseType !== "text" && responseType !== "none")
    throw new HarnessUnsupported(
      `k6/http: responseType "${responseType}" is not implemented by the harness; it implements "text" and "none"`,
    );
  const timeoutMs = p.timeout === undefined ? DEFAULT_TIMEOUT_MS : durationMs(p.timeout, "params.timeout");
  /** @type {{status: number, body: string | null, headers: Record<string, string>, timings: {duration: number, waiting: number, receiving: number}, error: string, errorCode: number, url: string}} */
  const r = call("http", {
    method,
    url,
    body: body ?? null,
    headers: p.headers ?? {},
    timeoutMs,
    responseType,
  });
  const expected = r.status >= 200 && r.status <= 399;
  /** @type {Record<string, string>} */
  const tags = {
    method,
    url,
    name: url,
    status: String(r.status),
    expected_response: String(expected),
    ...(r.errorCode ? { error_code: String(r.errorCode) } : {}),
    ...(p.tags ?? {}),
  };
  emit("http_reqs", 1, tags);
  emit("http_req_duration", r.timings.duration, tags);
  emit("http_req_waiting", r.timings.waiting, tags);
  emit("http_req_receiving", r.timings.receiving, tags);
  emit("http_req_failed", expected ? 0 : 1, tags);
  return response(r);
}

/**
 * @param {{status: number, body: string | null, headers: Record<string, string>, timings: {duration: number, waiting: number, receiving: number}, error: string, errorCode: number, url: string}} r
 */
function response(r) {
  const res = {
    status: r.status,
    body: r.body,
    headers: r.headers,
    timings: strictObject("Response.timings field", r.timings, "a Response's timings"),
    error: r.error,
    error_code: r.errorCode,
    url: r.url,
    /** @param {string} [selector] */
    json(selector) {
      if (selector !== undefined)
        throw new HarnessUnsupported(
          "k6/http: Response.json(selector) (GJSON selectors) is not implemented by the harness; call json() and read the field",
        );
      if (typeof r.body !== "string")
        throw new Error(
          `Response.json: the response has no body (status ${r.status}${r.error ? `, ${r.error}` : ""})`,
        );
      return JSON.parse(r.body);
    },
  };
  return strictObject("Response property", res, "a k6/http Response");
}

/** @param {string} url @param {Params} [params] */
export const get = (url, params) => request("GET", url, null, params);
/** @param {string} url @param {unknown} [body] @param {Params} [params] */
export const post = (url, body, params) => request("POST", url, body, params);
/** @param {string} url @param {unknown} [body] @param {Params} [params] */
export const put = (url, body, params) => request("PUT", url, body, params);
/** @param {string} url @param {unknown} [body] @param {Params} [params] */
export const patch = (url, body, params) => request("PATCH", url, body, params);
/** @param {string} url @param {unknown} [body] @param {Params} [params] */
export const del = (url, body, params) => request("DELETE", url, body, params);

export default strictModule("k6/http", { request, get, post, put, patch, del });
