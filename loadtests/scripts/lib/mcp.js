// @ts-check
/**
 * A minimal MCP client over Streamable HTTP with k6/http: what an agent does against the gateway's
 * `/mcp?workspace=<id>` — initialize (the gateway answers with an Mcp-Session-Id), the initialized
 * notification, then tools/call. A POST's answer is either one JSON-RPC message (application/json)
 * or an SSE-framed body (text/event-stream: progress notifications, then the response): both are read.
 */
import http from "k6/http";

/** The protocol revision the gateway serves (README, "Agents over MCP"). */
export const PROTOCOL_VERSION = "2025-11-25";

/**
 * The JSON-RPC messages of a POST's answer, whichever framing the server chose.
 * @param {import("k6/http").RefinedResponse<"text">} res
 * @returns {Array<{id?: number | string | null, result?: any, error?: {code: number, message: string}}>}
 */
export function rpcMessages(res) {
  const body = typeof res.body === "string" ? res.body : "";
  if (body === "") return [];
  const type = String(res.headers["Content-Type"] ?? "");
  if (!type.startsWith("text/event-stream")) {
    const parsed = JSON.parse(body);
    return Array.isArray(parsed) ? parsed : [parsed];
  }
  /** @type {any[]} */
  const out = [];
  for (const block of body.split(/\r?\n\r?\n/)) {
    const data = block
      .split(/\r?\n/)
      .filter((l) => l.startsWith("data:"))
      .map((l) => l.slice(5).replace(/^ /, ""))
      .join("\n");
    if (data !== "") out.push(JSON.parse(data));
  }
  return out;
}

/** One agent's MCP session on one workspace, as the person `token` names. */
export class McpSession {
  /**
   * @param {string} baseUrl the gateway's origin
   * @param {string} workspaceId
   * @param {string} token bearer token of the person whose agent this is
   */
  constructor(baseUrl, workspaceId, token) {
    this.url = `${baseUrl}/mcp?workspace=${encodeURIComponent(workspaceId)}`;
    this.token = token;
    /** @type {string | undefined} */
    this.sessionId = undefined;
    this.nextId = 1;
  }

  /**
   * @param {Record<string, string>} [extra]
   * @returns {Record<string, string>}
   */
  headers(extra = {}) {
    /** @type {Record<string, string>} */
    const h = {
      authorization: `Bearer ${this.token}`,
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...extra,
    };
    if (this.sessionId) {
      h["mcp-session-id"] = this.sessionId;
      h["mcp-protocol-version"] = PROTOCOL_VERSION;
    }
    return h;
  }

  /**
   * Opens the session: initialize, then notifications/initialized. Returns the initialize response.
   * @throws Error naming the status and body when the gateway refuses.
   */
  open() {
    const id = this.nextId++;
    const res = http.post(
      this.url,
      JSON.stringify({
        jsonrpc: "2.0",
        id,
        method: "initialize",
        params: {
          protocolVersion: PROTOCOL_VERSION,
          capabilities: {},
          clientInfo: { name: "gatehouse-loadtests", version: "0.1.0" },
        },
      }),
      { headers: this.headers(), tags: { name: "mcp initialize", kind: "mcp" }, timeout: "60s" },
    );
    const sid = res.headers["Mcp-Session-Id"];
    if (res.status !== 200 || !sid)
      throw new Error(
        `MCP initialize answered ${res.status} ${res.error || ""}: ${String(res.body).slice(0, 300)}`,
      );
    this.sessionId = sid;
    const note = http.post(
      this.url,
      JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" }),
      {
        headers: this.headers(),
        tags: { name: "mcp initialized", kind: "mcp" },
        timeout: "60s",
      },
    );
    if (note.status !== 202 && note.status !== 200)
      throw new Error(
        `MCP notifications/initialized answered ${note.status}: ${String(note.body).slice(0, 300)}`,
      );
    return res;
  }

  /**
   * Calls a tool; returns the HTTP response and the tool result (undefined when the call failed).
   * @param {string} name
   * @param {Record<string, unknown>} args
   * @param {{timeout?: string, tags?: Record<string, string>}} [opts]
   * @returns {{res: import("k6/http").RefinedResponse<"text">, result: any, error: string}}
   */
  callTool(name, args, opts = {}) {
    const id = this.nextId++;
    const res = http.post(
      this.url,
      JSON.stringify({ jsonrpc: "2.0", id, method: "tools/call", params: { name, arguments: args } }),
      {
        headers: this.headers(),
        tags: { name: `mcp tools/call ${name}`, kind: "mcp", ...(opts.tags ?? {}) },
        timeout: opts.timeout ?? "60s",
      },
    );
    if (res.status !== 200) return { res, result: undefined, error: `HTTP ${res.status} ${res.error || ""}` };
    let messages;
    try {
      messages = rpcMessages(res);
    } catch (err) {
      return { res, result: undefined, error: `unreadable answer: ${String(err)}` };
    }
    const answer = messages.find((m) => m.id === id);
    if (!answer) return { res, result: undefined, error: "no JSON-RPC response with the request's id" };
    if (answer.error)
      return {
        res,
        result: undefined,
        error: `JSON-RPC error ${answer.error.code}: ${answer.error.message}`,
      };
    return { res, result: answer.result, error: "" };
  }

  /** Ends the session (DELETE); returns the answer (the gateway's 200, or 404 when it had expired). */
  close() {
    if (!this.sessionId) return undefined;
    const { "content-type": _json, ...headers } = this.headers(); // no body: no content type
    const res = http.del(this.url, null, {
      headers,
      tags: { name: "mcp delete", kind: "mcp" },
      timeout: "30s",
    });
    this.sessionId = undefined;
    return res;
  }
}
