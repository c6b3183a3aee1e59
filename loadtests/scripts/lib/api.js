// @ts-check
/** The gateway's HTTP/JSON API as a person uses it (bearer token), through k6/http. */
import http from "k6/http";
import { BASE_URL } from "./config.js";

/**
 * @param {string} token
 * @returns {Record<string, string>}
 */
function headers(token) {
  return { authorization: `Bearer ${token}`, "content-type": "application/json" };
}

/**
 * GET `path` as the person `token` names.
 * @param {string} token
 * @param {string} path e.g. "/api/inbox"
 * @param {string} name the request's `name` tag (groups URLs with ids in the summary)
 */
export function apiGet(token, path, name) {
  return http.get(`${BASE_URL}${path}`, {
    headers: headers(token),
    tags: { name, kind: "api" },
    timeout: "60s",
  });
}

/**
 * POST a JSON `body` to `path` as the person `token` names.
 * @param {string} token
 * @param {string} path
 * @param {unknown} body
 * @param {string} name the request's `name` tag
 */
export function apiPost(token, path, body, name) {
  return http.post(`${BASE_URL}${path}`, JSON.stringify(body), {
    headers: headers(token),
    tags: { name, kind: "api" },
    timeout: "120s",
  });
}

/**
 * The body of `res` as JSON. @throws Error naming the request, status and body when it is not 2xx.
 * @param {import("k6/http").RefinedResponse<"text">} res
 * @param {string} what e.g. "POST /api/workspaces"
 * @returns {any}
 */
export function jsonOf(res, what) {
  if (res.status < 200 || res.status > 299)
    throw new Error(`${what} answered ${res.status} ${res.error || ""}: ${String(res.body).slice(0, 300)}`);
  return res.json();
}
