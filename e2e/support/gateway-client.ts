/** A small client of the gateway's HTTP API and event stream for the cross-service tests. */
import type { LogNotice } from "@gatehouse/gateway-contract";

export interface ApiResult<T = unknown> {
  status: number;
  body: T;
}

/** Calls the gateway API with a bearer token; never throws for HTTP errors. */
export async function api<T = unknown>(
  base: string,
  token: string | undefined,
  method: string,
  path: string,
  body?: unknown,
): Promise<ApiResult<T>> {
  const res = await fetch(`${base}${path}`, {
    method,
    headers: {
      ...(token ? { authorization: `Bearer ${token}` } : {}),
      ...(body !== undefined ? { "content-type": "application/json" } : {}),
    },
    ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  return { status: res.status, body: (text ? JSON.parse(text) : undefined) as T };
}

export interface EventStreamClient {
  /** Events in arrival order; `at` is the arrival time (epoch ms). */
  events: Array<{ event: string; data: LogNotice | { reason: string }; at: number }>;
  /** Resolves once an event matching `pred` has arrived (≤ timeoutMs, default 60 s: a busy machine is slow). */
  waitFor(pred: (e: { event: string; data: unknown }) => boolean, timeoutMs?: number): Promise<void>;
  close(): void;
}

/** Opens GET /api/events and collects the server-sent events. */
export async function openEvents(base: string, token: string): Promise<EventStreamClient> {
  const abort = new AbortController();
  const res = await fetch(`${base}/api/events`, {
    headers: { authorization: `Bearer ${token}` },
    signal: abort.signal,
  });
  if (!res.ok || !res.body) throw new Error(`GET /api/events answered ${res.status}`);
  const events: EventStreamClient["events"] = [];
  const reader = res.body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  void (async () => {
    try {
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return;
        buffer += decoder.decode(value, { stream: true });
        let end = buffer.indexOf("\n\n");
        while (end >= 0) {
          const block = buffer.slice(0, end);
          buffer = buffer.slice(end + 2);
          const event = /^event: (.+)$/m.exec(block)?.[1];
          const data = /^data: (.+)$/m.exec(block)?.[1];
          if (event && data) events.push({ event, data: JSON.parse(data), at: Date.now() });
          end = buffer.indexOf("\n\n");
        }
      }
    } catch {
      // aborted
    }
  })();
  return {
    events,
    async waitFor(pred, timeoutMs = 60_000) {
      const deadline = Date.now() + timeoutMs;
      while (!events.some(pred)) {
        if (Date.now() > deadline)
          throw new Error(`no matching event within ${timeoutMs} ms; got ${JSON.stringify(events)}`);
        await new Promise((r) => setTimeout(r, 20));
      }
    },
    close: () => abort.abort(),
  };
}
