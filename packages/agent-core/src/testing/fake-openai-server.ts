/**
 * FAKE OpenAI-compatible chat completions server, for tests only: no real model can be reached from
 * the machines these tests run on, so this replays a script of recorded answers, one per request to
 * `POST /v1/chat/completions`, in order. Each cue answers as the request asks — a JSON completion,
 * or server-sent `chat.completion.chunk` events ending in `data: [DONE]` when `stream: true` — with
 * text, tool calls (whose `arguments` text is sent as scripted, malformed or not), or an HTTP error
 * status (429, 500, 503) with an OpenAI-style error body. A streamed cue may pace its text
 * (`chunkChars`, `chunkDelayMs`), so a client sees it arrive over time. It listens on 127.0.0.1 only
 * and records every request (body, the Authorization header, when it arrived and how long the fake
 * took to answer) for assertions and for benchmarks that subtract the model's own time. A request past the end of the
 * script gets 500 "FAKE script exhausted", so a test that calls the model more than it scripted fails.
 */
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { performance } from "node:perf_hooks";

/**
 * How a streamed answer's text is sent: in pieces of `chunkChars` characters (default: two halves),
 * `chunkDelayMs` apart (default 0). A JSON (not streamed) answer ignores both.
 */
export interface FakePacing {
  chunkChars?: number;
  chunkDelayMs?: number;
}

/** One scripted answer. */
export type FakeCue =
  | ({ kind: "text"; text: string; usage?: FakeUsage; delayMs?: number } & FakePacing)
  | ({
      kind: "tool_calls";
      /** Optional text before the calls. */
      text?: string;
      calls: Array<{ id?: string; name: string; arguments: string }>;
      usage?: FakeUsage;
      delayMs?: number;
    } & FakePacing)
  | { kind: "error"; status: number; message: string; retryAfterSeconds?: number };

/** Token counts the answer reports (default 10 prompt, 5 completion). */
export interface FakeUsage {
  promptTokens: number;
  completionTokens: number;
}

/** A request the fake received. */
export interface FakeRequest {
  /** The parsed JSON body (model, messages, tools, stream, ...). */
  body: { model?: string; stream?: boolean; messages?: unknown[]; tools?: unknown[] } & Record<
    string,
    unknown
  >;
  /** The Authorization header as sent ("" when none). */
  authorization: string;
  /** Which cue answered it (index in the script), -1 when the script was exhausted. */
  cue: number;
  /** When the request arrived (its headers were read), ms since the epoch (`Date.now()`). */
  receivedAt: number;
  /**
   * The fake's own time for this request, ms (`performance.now()`): from its arrival to the last byte
   * of the answer handed to the socket (a cue's `delayMs` and `chunkDelayMs` pauses included). Undefined until answered.
   */
  answerMs?: number;
}

/** A running fake. */
export interface FakeOpenAiServer {
  /** Base URL for an OpenAI-compatible client, e.g. "http://127.0.0.1:43121/v1". */
  baseUrl: string;
  /** Every request so far, in order. */
  requests: FakeRequest[];
  /** Appends cues to the script. */
  push(...cues: FakeCue[]): void;
  /** Cues not yet answered. */
  remaining(): number;
  /** Drops the cues not yet answered (a test's leftovers), returning how many. */
  clear(): number;
  close(): Promise<void>;
}

let ids = 0;

function usageOf(u: FakeUsage | undefined) {
  const prompt = u?.promptTokens ?? 10;
  const completion = u?.completionTokens ?? 5;
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function toolCallsOf(cue: Extract<FakeCue, { kind: "tool_calls" }>) {
  return cue.calls.map((c, index) => ({
    index,
    id: c.id ?? `call_${++ids}`,
    type: "function" as const,
    function: { name: c.name, arguments: c.arguments },
  }));
}

function answerJson(res: ServerResponse, model: string, cue: Exclude<FakeCue, { kind: "error" }>): void {
  const calls = cue.kind === "tool_calls" ? toolCallsOf(cue) : undefined;
  const body = {
    id: `chatcmpl-fake-${++ids}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model,
    choices: [
      {
        index: 0,
        message: {
          role: "assistant",
          content: cue.text ?? null,
          ...(calls ? { tool_calls: calls.map(({ index: _, ...c }) => c) } : {}),
        },
        finish_reason: calls ? "tool_calls" : "stop",
      },
    ],
    usage: usageOf(cue.usage),
  };
  res.writeHead(200, { "content-type": "application/json" });
  res.end(JSON.stringify(body));
}

/** The pieces a streamed answer's text is sent in. */
function piecesOf(text: string, chunkChars: number | undefined): string[] {
  const size = chunkChars && chunkChars > 0 ? chunkChars : Math.ceil(text.length / 2);
  const out: string[] = [];
  for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
  return out;
}

async function answerStream(
  res: ServerResponse,
  model: string,
  cue: Exclude<FakeCue, { kind: "error" }>,
): Promise<void> {
  const id = `chatcmpl-fake-${++ids}`;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: unknown, finish: string | null, usage?: unknown) =>
    `data: ${JSON.stringify({
      id,
      object: "chat.completion.chunk",
      created,
      model,
      choices: [{ index: 0, delta, finish_reason: finish }],
      ...(usage ? { usage } : {}),
    })}\n\n`;
  res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache" });
  res.write(chunk({ role: "assistant", content: "" }, null));
  // At least two deltas, so a client that streams sees the text arrive in parts.
  for (const [i, piece] of piecesOf(cue.text ?? "", cue.chunkChars).entries()) {
    if (i > 0 && cue.chunkDelayMs) await new Promise((r) => setTimeout(r, cue.chunkDelayMs));
    if (res.destroyed) return;
    res.write(chunk({ content: piece }, null));
  }
  const calls = cue.kind === "tool_calls" ? toolCallsOf(cue) : undefined;
  for (const c of calls ?? []) {
    res.write(
      chunk(
        {
          tool_calls: [
            {
              index: c.index,
              id: c.id,
              type: "function",
              function: { name: c.function.name, arguments: "" },
            },
          ],
        },
        null,
      ),
    );
    res.write(
      chunk({ tool_calls: [{ index: c.index, function: { arguments: c.function.arguments } }] }, null),
    );
  }
  res.write(chunk({}, calls ? "tool_calls" : "stop", usageOf(cue.usage)));
  res.end("data: [DONE]\n\n");
}

function readBody(req: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const parts: Buffer[] = [];
    req.on("data", (b: Buffer) => parts.push(b));
    req.on("end", () => resolve(Buffer.concat(parts).toString("utf8")));
    req.on("error", reject);
  });
}

/**
 * Starts the FAKE server on 127.0.0.1 (a free port) with `script`.
 * @returns the running fake; `close()` it in the test's `after`.
 */
export async function startFakeOpenAiServer(script: FakeCue[] = []): Promise<FakeOpenAiServer> {
  const cues = [...script];
  let next = 0;
  const requests: FakeRequest[] = [];
  const server: Server = createServer((req, res) => {
    const receivedAt = Date.now();
    const began = performance.now();
    let record: FakeRequest | undefined;
    res.once("finish", () => {
      if (record) record.answerMs = performance.now() - began;
    });
    void (async () => {
      if (req.method !== "POST" || !req.url?.endsWith("/chat/completions")) {
        res.writeHead(404, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: `FAKE: no route ${req.method} ${req.url}` } }));
        return;
      }
      const text = await readBody(req);
      let body: FakeRequest["body"];
      try {
        body = JSON.parse(text) as FakeRequest["body"];
      } catch {
        res.writeHead(400, { "content-type": "application/json" });
        res.end(JSON.stringify({ error: { message: "FAKE: body is not JSON" } }));
        return;
      }
      const index = next < cues.length ? next++ : -1;
      record = { body, authorization: req.headers.authorization ?? "", cue: index, receivedAt };
      requests.push(record);
      const cue = index >= 0 ? cues[index] : undefined;
      if (!cue) {
        res.writeHead(500, { "content-type": "application/json" });
        res.end(
          JSON.stringify({
            error: {
              message: "FAKE script exhausted: the test scripted fewer answers than the model was asked for",
              type: "server_error",
            },
          }),
        );
        return;
      }
      if (cue.kind === "error") {
        const headers: Record<string, string> = { "content-type": "application/json" };
        if (cue.retryAfterSeconds !== undefined) headers["retry-after"] = String(cue.retryAfterSeconds);
        res.writeHead(cue.status, headers);
        res.end(
          JSON.stringify({
            error: {
              message: cue.message,
              type: cue.status === 429 ? "rate_limit_exceeded" : "server_error",
              code: null,
            },
          }),
        );
        return;
      }
      if (cue.delayMs) await new Promise((r) => setTimeout(r, cue.delayMs));
      const model = body.model ?? "fake";
      if (body.stream) await answerStream(res, model, cue);
      else answerJson(res, model, cue);
    })().catch((err: unknown) => {
      res.destroy(err instanceof Error ? err : new Error(String(err)));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://127.0.0.1:${port}/v1`,
    requests,
    push: (...more) => void cues.push(...more),
    remaining: () => cues.length - next,
    clear: () => {
      const dropped = cues.length - next;
      cues.length = next;
      return dropped;
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
