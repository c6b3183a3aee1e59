/**
 * Notices, over Streamable HTTP, that the answer to a request can no longer come, so a tool call
 * whose connection died ends at once (as outcome unknown) instead of waiting for its timeout.
 *
 * Why: a server answers a POSTed request with an SSE stream. When that stream breaks (the server
 * died, a proxy cut the connection) before the answer, the SDK's StreamableHTTPClientTransport
 * reports it to `onerror` and, unless the stream was resumable (it carried an event id), drops it:
 * the request itself stays pending until its timeout (an apply's is its deadline, up to the
 * worker's GATEKEEPER_APPLY_MAX). A resumable stream is re-opened with GET and Last-Event-ID, at
 * most `reconnectionOptions.maxRetries` times; after the last failure the SDK reports "Maximum
 * reconnection attempts" and, again, leaves the request pending.
 *
 * How: `fetch` (given to the transport) wraps the body of every SSE answer to a POST, noting the
 * JSON-RPC request ids the POST carried and whether an event id went by; `attach` learns the id of
 * each request as the SDK sends it (the SDK sends synchronously inside `Client.request`) and hears
 * the transport's errors. `watchLastRequest()`, called right after starting a request, returns a
 * promise that rejects with `ResponseStreamLost` when that request's stream ended without its
 * answer: after `graceMs` (so an answer still in the SDK's parser is delivered first) for a stream
 * that cannot be resumed, or when the SDK gave up re-opening a resumable one, or when a resumable
 * stream that BROKE (an error, not a clean end by the server) is not re-opened within
 * `RESUME_WAIT_MS` (a server may ask for long reconnection delays with SSE `retry:`). A re-opened
 * stream (a GET with Last-Event-ID that the server accepted) stops that wait; its own break
 * starts it again.
 */
import type { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { JSONRPCMessage } from "@modelcontextprotocol/sdk/types.js";

/** How long an ended stream's answer may still be on its way through the SDK's parser, in ms. */
export const STREAM_END_GRACE_MS = 250;

/** How long a broken resumable answer stream may take to be re-opened, in ms. */
export const RESUME_WAIT_MS = 10_000;

/**
 * The answer stream of a request ended (or broke) before its answer. `cause` is the stream's own
 * error when it broke (undici's "terminated" with UND_ERR_SOCKET, ...); a stream that ended
 * cleanly has none and carries the code ERR_STREAM_PREMATURE_CLOSE itself.
 */
export class ResponseStreamLost extends Error {
  override name = "ResponseStreamLost";
  readonly code: string | undefined;
  constructor(message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.code = cause === undefined ? "ERR_STREAM_PREMATURE_CLOSE" : undefined;
  }
}

type RequestId = string | number;

interface Watcher {
  reject(err: ResponseStreamLost): void;
  /** The stream ended resumably: waiting for the SDK to re-open it or give up. */
  awaitingResume: boolean;
  /** The error the request's stream first broke with, if it broke. */
  cause: unknown;
  timer: NodeJS.Timeout | undefined;
}

/** Request ids in a POST body (a JSON-RPC message or a batch), or [] when it is not one. */
function requestIds(body: unknown): RequestId[] {
  if (typeof body !== "string") return [];
  try {
    const parsed = JSON.parse(body) as unknown;
    const messages = Array.isArray(parsed) ? parsed : [parsed];
    return messages
      .filter((m): m is { id: RequestId; method: string } => {
        const o = m as { id?: unknown; method?: unknown } | null;
        return typeof o?.method === "string" && (typeof o.id === "string" || typeof o.id === "number");
      })
      .map((m) => m.id);
  } catch {
    return [];
  }
}

/** One watch per Streamable HTTP connection (see the file comment). */
export class ResponseStreamWatch {
  readonly #watchers = new Map<RequestId, Watcher>();
  readonly #graceMs: number;
  #lastRequestId: RequestId | undefined;

  /** @param graceMs see STREAM_END_GRACE_MS. */
  constructor(graceMs: number = STREAM_END_GRACE_MS) {
    this.#graceMs = graceMs;
  }

  /** The `fetch` to give StreamableHTTPClientTransport: global fetch, with SSE answers watched. */
  readonly fetch = async (url: string | URL, init?: RequestInit): Promise<Response> => {
    const response = await fetch(url, init);
    const type = response.headers.get("content-type") ?? "";
    if (!response.ok || !response.body || !type.toLowerCase().startsWith("text/event-stream"))
      return response;
    let onEnd: (resumable: boolean, error: unknown) => void;
    if (init?.method === "POST") {
      const ids = requestIds(init.body);
      if (ids.length === 0) return response;
      onEnd = (resumable, error) => this.#ended(ids, resumable, error);
    } else if (new Headers(init?.headers).has("last-event-id")) {
      // A broken stream re-opened: the requests waiting for it may still get their answer.
      this.#eachAwaiting((w) => clearTimeout(w.timer));
      onEnd = (_resumable, error) => {
        if (error !== undefined) this.#eachAwaiting((w, id) => this.#waitForResume(id, w));
      };
    } else {
      return response;
    }
    const watched = this.#watchBody(response.body, onEnd);
    // The SDK reads an SSE answer only through `body`; the rest of the response stays as it came.
    Object.defineProperty(response, "body", { value: watched, configurable: true });
    return response;
  };

  /**
   * Hooks `transport` before `Client.connect`: its `send` (to learn each request's id) and its
   * `onerror` (the SDK's "Maximum reconnection attempts" ends every request awaiting a resume).
   */
  attach(transport: StreamableHTTPClientTransport): void {
    const send = transport.send.bind(transport);
    transport.send = (message: JSONRPCMessage, options) => {
      const m = message as { id?: unknown; method?: unknown };
      if (typeof m.method === "string" && (typeof m.id === "string" || typeof m.id === "number")) {
        this.#lastRequestId = m.id;
      }
      return send(message, options);
    };
    transport.onerror = (err: Error) => {
      if (!/^Maximum reconnection attempts/.test(err.message)) return;
      this.#eachAwaiting((w, id) =>
        this.#lose(id, new ResponseStreamLost("re-opening the broken answer stream failed", w.cause ?? err)),
      );
    };
  }

  /**
   * Watches the request the SDK sent last (call it synchronously right after `Client.request`).
   * @returns `lost`, rejecting with ResponseStreamLost when the request's answer stream ended
   *   without its answer (it never resolves), and `dispose` to stop watching; undefined when no
   *   request was seen.
   */
  watchLastRequest(): { lost: Promise<never>; dispose(): void } | undefined {
    const id = this.#lastRequestId;
    this.#lastRequestId = undefined;
    if (id === undefined) return undefined;
    let reject!: (err: ResponseStreamLost) => void;
    const lost = new Promise<never>((_, r) => {
      reject = r;
    });
    lost.catch(() => {}); // observed by the caller's race; never an unhandled rejection
    this.#watchers.set(id, { reject, awaitingResume: false, cause: undefined, timer: undefined });
    return {
      lost,
      dispose: () => {
        const w = this.#watchers.get(id);
        if (w) clearTimeout(w.timer);
        this.#watchers.delete(id);
      },
    };
  }

  #lose(id: RequestId, err: ResponseStreamLost): void {
    const w = this.#watchers.get(id);
    if (!w) return;
    clearTimeout(w.timer);
    this.#watchers.delete(id);
    w.reject(err);
  }

  #eachAwaiting(fn: (w: Watcher, id: RequestId) => void): void {
    for (const [id, w] of [...this.#watchers]) if (w.awaitingResume) fn(w, id);
  }

  /** Loses `id` unless its broken stream is re-opened within RESUME_WAIT_MS. */
  #waitForResume(id: RequestId, w: Watcher): void {
    clearTimeout(w.timer);
    w.timer = setTimeout(
      () =>
        this.#lose(id, new ResponseStreamLost("the broken answer stream was not re-opened in time", w.cause)),
      RESUME_WAIT_MS,
    );
  }

  /** The stream answering `ids` ended (`error` when it broke). */
  #ended(ids: RequestId[], resumable: boolean, error: unknown): void {
    for (const id of ids) {
      const w = this.#watchers.get(id);
      if (!w) continue;
      if (resumable) {
        w.awaitingResume = true;
        w.cause ??= error;
        if (error !== undefined) this.#waitForResume(id, w);
        continue;
      }
      const err = new ResponseStreamLost(
        error === undefined
          ? "the answer stream ended before the answer"
          : "the answer stream broke before the answer",
        error,
      );
      w.timer = setTimeout(() => this.#lose(id, err), this.#graceMs);
    }
  }

  /** `body` passed through unchanged, reporting its end (and whether an event id went by) to `onEnd`. */
  #watchBody(
    body: ReadableStream<Uint8Array>,
    onEnd: (resumable: boolean, error: unknown) => void,
  ): ReadableStream<Uint8Array> {
    const reader = body.getReader();
    const decoder = new TextDecoder();
    let resumable = false;
    let tail = "\n";
    return new ReadableStream<Uint8Array>({
      pull: async (controller) => {
        let chunk: Awaited<ReturnType<typeof reader.read>>;
        try {
          chunk = await reader.read();
        } catch (err) {
          onEnd(resumable, err);
          controller.error(err);
          return;
        }
        try {
          if (chunk.done) {
            onEnd(resumable, undefined);
            controller.close();
            return;
          }
          if (!resumable) {
            // An SSE event id (a line starting "id:") makes the stream resumable for the SDK.
            const text = tail + decoder.decode(chunk.value, { stream: true });
            resumable = /[\r\n]id:/.test(text);
            tail = text.slice(-3);
          }
          controller.enqueue(chunk.value);
        } catch {
          // the SDK cancelled the stream (its transport closed): nothing more to pass on
        }
      },
      cancel: (reason) => reader.cancel(reason),
    });
  }
}
