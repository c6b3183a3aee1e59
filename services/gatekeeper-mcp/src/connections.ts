/**
 * One live MCP client per resource connection (stdio server name or HTTP endpoint URL), reused by
 * every session and apply, reconnected on demand after a failure, and closed on shutdown (which
 * ends stdio children; they also exit on stdin EOF if the service dies).
 *
 * Only registry entries ever become stdio commands: the `target` comes from `resolveResourceUrl`.
 *
 * A Streamable HTTP server that answers 404 to a request carrying our session id no longer knows
 * the session (it restarted, or expired it) and did not process the request (MCP spec, "Session
 * Management"): the pool then drops that client, initializes a new session and sends the same
 * request once more. Any other failure is never retried for a tool call.
 *
 * A call whose connection dies ends at once instead of at its timeout: over stdio the SDK fails
 * every pending request when the server process exits; over Streamable HTTP a `ResponseStreamWatch`
 * notices an answer stream that broke (stream-watch.ts), and re-opening a resumable stream is tried
 * only briefly (`RECONNECTION`).
 */
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { type CallToolResult, CallToolResultSchema, type Tool } from "@modelcontextprotocol/sdk/types.js";
import type { Logger } from "pino";
import { z } from "zod";
import { ServerUnavailable } from "./errors.ts";
import type { ResolvedResource } from "./resource-url.ts";
import { ResponseStreamLost, ResponseStreamWatch } from "./stream-watch.ts";
import { callErrorMessage, connectFailed } from "./transport-faults.ts";

/**
 * tools/list is parsed leniently: the SDK's own schema rejects the WHOLE list when one tool carries
 * an odd annotation (e.g. readOnlyHint: "true"), but such a tool must still be listed and then
 * classified as an action. Entries without a string name are dropped.
 */
const LenientListResult = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });
const LenientTool = z.looseObject({
  name: z.string().min(1),
  description: z.string().optional(),
  inputSchema: z.looseObject({}).default({ type: "object" }),
  annotations: z.record(z.string(), z.unknown()).optional(),
});

/** Timeouts in milliseconds. */
export interface PoolTimeouts {
  connectMs: number;
  listMs: number;
  callMs: number;
}

const DEFAULT_TIMEOUTS: PoolTimeouts = { connectMs: 20_000, listMs: 20_000, callMs: 120_000 };

/**
 * Re-opening a broken resumable SSE stream (Streamable HTTP): two tries, 0.5 s then 0.75 s apart,
 * so a request whose server is gone ends within seconds (the SDK's default waits longer).
 */
const RECONNECTION = {
  initialReconnectionDelay: 500,
  maxReconnectionDelay: 2000,
  reconnectionDelayGrowFactor: 1.5,
  maxRetries: 2,
};

interface Entry {
  ready: Promise<Client>;
  tools: Promise<Tool[]> | null;
  closed: boolean;
  /** Streamable HTTP only: notices answer streams that broke. */
  watch: ResponseStreamWatch | null;
}

/** Observer of MCP requests, e.g. for metrics: `method` is "initialize", "tools/list" or "tools/call". */
export type RequestObserver = (method: string, outcome: "ok" | "error") => void;

/**
 * True for the SDK's error for an HTTP 404 answer to a request: over Streamable HTTP a client only
 * sends requests inside an initialized session, so this is the server saying the session is gone.
 */
function sessionGone(err: unknown): boolean {
  return err instanceof StreamableHTTPError && err.code === 404;
}

/** A pool of MCP clients keyed by `ResolvedResource.connectionKey`. */
export class ConnectionPool {
  readonly #entries = new Map<string, Entry>();
  readonly #logger: Logger;
  readonly #timeouts: PoolTimeouts;
  readonly #observe: RequestObserver;
  #shutDown = false;

  constructor(opts: { logger: Logger; timeouts?: Partial<PoolTimeouts>; observe?: RequestObserver }) {
    this.#logger = opts.logger.child({ component: "mcp-connections" });
    this.#timeouts = { ...DEFAULT_TIMEOUTS, ...opts.timeouts };
    this.#observe = opts.observe ?? (() => {});
  }

  /** Number of live (or connecting) clients. */
  get size(): number {
    return this.#entries.size;
  }

  #connect(resource: ResolvedResource): Entry {
    const key = resource.connectionKey;
    const entry: Entry = { ready: Promise.resolve(null as never), tools: null, closed: false, watch: null };
    entry.ready = (async () => {
      const client = new Client({ name: "gatehouse-gatekeeper-mcp", version: "0.1.0" });
      const t = resource.target;
      let transport: StdioClientTransport | StreamableHTTPClientTransport;
      if (t.kind === "stdio") {
        transport = new StdioClientTransport({
          command: t.server.command,
          args: t.server.args,
          env: t.server.env,
          stderr: "ignore",
        });
      } else {
        const watch = new ResponseStreamWatch();
        transport = new StreamableHTTPClientTransport(new URL(t.url), {
          requestInit: { redirect: "error" },
          fetch: watch.fetch,
          reconnectionOptions: RECONNECTION,
        });
        watch.attach(transport);
        entry.watch = watch;
      }
      client.onclose = () => {
        entry.closed = true;
        if (this.#entries.get(key) === entry) this.#entries.delete(key);
        this.#logger.info(
          { event: "mcp.disconnected", server: resource.serverName },
          "MCP connection closed",
        );
      };
      try {
        await client.connect(transport, { timeout: this.#timeouts.connectMs });
        this.#observe("initialize", "ok");
      } catch (err) {
        this.#observe("initialize", "error");
        if (this.#entries.get(key) === entry) this.#entries.delete(key);
        await client.close().catch(() => {});
        this.#logger.warn({ event: "mcp.connect_failed", server: resource.serverName }, "MCP connect failed");
        throw connectFailed(resource, err);
      }
      this.#logger.info({ event: "mcp.connected", server: resource.serverName }, "MCP connection open");
      return client;
    })();
    return entry;
  }

  #entry(resource: ResolvedResource): Entry {
    if (this.#shutDown)
      throw new ServerUnavailable("the gatekeeper is shutting down; retry on another instance");
    let entry = this.#entries.get(resource.connectionKey);
    if (!entry || entry.closed) {
      entry = this.#connect(resource);
      this.#entries.set(resource.connectionKey, entry);
    }
    return entry;
  }

  /** A connected client for `resource` (connecting if needed). @throws ServerUnavailable. */
  async client(resource: ResolvedResource): Promise<Client> {
    return this.#entry(resource).ready;
  }

  /**
   * Every tool the server lists (all pages), cached per connection. Retries once on a fresh
   * connection if the cached one broke (listing has no side effects).
   * @throws ServerUnavailable when the server cannot be reached or listing fails.
   */
  async listTools(resource: ResolvedResource): Promise<Tool[]> {
    for (let attempt = 0; ; attempt++) {
      const entry = this.#entry(resource);
      entry.tools ??= (async () => {
        const client = await entry.ready;
        const tools: Tool[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < 100; page++) {
          const listed = client.request(
            { method: "tools/list", params: cursor ? { cursor } : {} },
            LenientListResult,
            { timeout: this.#timeouts.listMs },
          );
          const watched = entry.watch?.watchLastRequest();
          const res = await (watched ? Promise.race([listed, watched.lost]) : listed).finally(() =>
            watched?.dispose(),
          );
          this.#observe("tools/list", "ok");
          for (const raw of res.tools) {
            const t = LenientTool.safeParse(raw);
            if (t.success) tools.push(t.data as unknown as Tool);
          }
          cursor = res.nextCursor;
          if (!cursor) break;
        }
        return tools;
      })();
      try {
        return await entry.tools;
      } catch (err) {
        entry.tools = null;
        if (!(err instanceof ServerUnavailable)) this.#observe("tools/list", "error");
        this.#drop(resource.connectionKey, entry);
        if (attempt >= 1 || err instanceof ServerUnavailable) {
          if (err instanceof ServerUnavailable) throw err;
          throw new ServerUnavailable(
            `${callErrorMessage(`listing the tools of MCP server "${resource.serverName}"`, resource, err)}; retry later`,
          );
        }
      }
    }
  }

  /**
   * Calls `tool` once (never retried after the server may have processed it: the call may have
   * side effects). The one exception is an HTTP 404 for our session (see the file comment): the
   * request was not processed, so it is sent again, once, in a new session. Protocol errors
   * (thrown by the SDK, e.g. McpError, StreamableHTTPError) reach the caller as they are, for it to
   * classify (transport-faults.ts); a tool failure is returned as the result with `isError: true`.
   * Over Streamable HTTP, an answer stream that broke before the answer ends the call at once with
   * `ResponseStreamLost` (stream-watch.ts).
   * @param timeoutMs how long to wait for the answer (default: the pool's `callMs`).
   * @throws ConnectFailed (a ServerUnavailable) when no connection could be made (the call was not sent).
   */
  async callTool(
    resource: ResolvedResource,
    tool: string,
    args: Record<string, unknown>,
    timeoutMs: number = this.#timeouts.callMs,
  ): Promise<CallToolResult> {
    for (let attempt = 0; ; attempt++) {
      const entry = this.#entry(resource);
      const client = await entry.ready;
      const abort = new AbortController();
      // `request`, not `callTool`: a result is taken as the server answered it (callTool would
      // throw after the call ran when structured content misses the tool's output schema).
      const answer = client.request(
        { method: "tools/call", params: { name: tool, arguments: args } },
        CallToolResultSchema,
        { timeout: timeoutMs, signal: abort.signal },
      );
      const watched = entry.watch?.watchLastRequest();
      try {
        const result = (await (watched ? Promise.race([answer, watched.lost]) : answer)) as CallToolResult;
        this.#observe("tools/call", "ok");
        return result;
      } catch (err) {
        // A lost stream: stop waiting for the answer (the SDK tells the server it is cancelled).
        if (err instanceof ResponseStreamLost) abort.abort(err);
        this.#observe("tools/call", "error");
        if (attempt === 0 && sessionGone(err)) {
          this.#logger.info(
            { event: "mcp.session_gone", server: resource.serverName },
            "server answered 404 for the session; starting a new session and sending the call again",
          );
          this.#drop(resource.connectionKey, entry);
          continue;
        }
        throw err;
      } finally {
        watched?.dispose();
      }
    }
  }

  #drop(key: string, entry: Entry): void {
    if (this.#entries.get(key) === entry) this.#entries.delete(key);
    entry.closed = true;
    entry.ready.then((c) => c.close()).catch(() => {});
  }

  /** Closes every client (stdio children are terminated) and refuses new connections. */
  async closeAll(): Promise<void> {
    this.#shutDown = true;
    const entries = [...this.#entries.values()];
    this.#entries.clear();
    await Promise.all(
      entries.map(async (e) => {
        try {
          const c = await e.ready;
          await c.close();
        } catch {
          // connection never opened; nothing to close
        }
      }),
    );
  }
}
