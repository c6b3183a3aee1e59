/**
 * The one server-sent-events connection of a signed-in session (GET /api/events), opened with
 * fetch-event-source so it can send the Authorization header. Listeners hear `open` on every
 * (re)open, `notice` per workspace change, `resync` when notices may have been missed, `down`
 * while the connection is broken, and `chat-delta` with the built-in agent's model text as it
 * streams (never stored: the recorded message replaces it). On `open` and `resync` they must
 * re-read everything they show.
 */
import type { ChatDelta, LogNotice } from "@gatehouse/gateway-contract";
import { EventStreamContentType, fetchEventSource } from "@microsoft/fetch-event-source";

/** What a live listener hears. */
export type LiveEvent =
  | { type: "open" }
  | { type: "down" }
  | { type: "resync"; reason: string }
  | { type: "notice"; notice: LogNotice }
  | { type: "chat-delta"; delta: ChatDelta };

/** Fan-out of live events to the components that show live data. */
export interface LiveHub {
  /** Adds a listener; returns the function that removes it. */
  subscribe(listener: (event: LiveEvent) => void): () => void;
  emit(event: LiveEvent): void;
}

/** Creates an empty hub; `connectLive` feeds it. */
export function createLiveHub(): LiveHub {
  const listeners = new Set<(event: LiveEvent) => void>();
  return {
    subscribe(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },
    emit(event) {
      for (const listener of [...listeners]) listener(event);
    },
  };
}

class Unauthorized extends Error {}
class Retry extends Error {}

/**
 * Opens GET /api/events with `token` and keeps it open, reconnecting with a capped exponential
 * backoff (1 s … 15 s). A 401 stops it and calls `onUnauthorized`. Returns the function that closes it.
 */
export function connectLive(
  token: string,
  hub: LiveHub,
  onUnauthorized: (message: string) => void,
): () => void {
  const controller = new AbortController();
  let failures = 0;

  void fetchEventSource("/api/events", {
    headers: { Authorization: `Bearer ${token}`, Accept: EventStreamContentType },
    signal: controller.signal,
    openWhenHidden: true,
    async onopen(response) {
      if (response.status === 401)
        throw new Unauthorized("your session has expired or the token was refused");
      const type = response.headers.get("content-type") ?? "";
      if (!response.ok || !type.startsWith(EventStreamContentType)) {
        throw new Retry(`event stream answered ${response.status}`);
      }
      failures = 0;
      hub.emit({ type: "open" });
    },
    onmessage(message) {
      if (message.event === "notice") {
        const notice = parse<LogNotice>(message.data);
        if (notice?.workspaceId) hub.emit({ type: "notice", notice });
      } else if (message.event === "chat-delta") {
        const delta = parse<ChatDelta>(message.data);
        if (delta?.chatId && typeof delta.text === "string") hub.emit({ type: "chat-delta", delta });
      } else if (message.event === "resync") {
        hub.emit({ type: "resync", reason: parse<{ reason?: string }>(message.data)?.reason ?? "" });
      }
    },
    onclose() {
      throw new Retry("event stream closed by the gateway");
    },
    onerror(error) {
      if (controller.signal.aborted) throw error;
      if (error instanceof Unauthorized) {
        onUnauthorized(error.message);
        throw error;
      }
      hub.emit({ type: "down" });
      failures += 1;
      return Math.min(1000 * 2 ** Math.min(failures - 1, 4), 15_000);
    },
  }).catch(() => {
    // Stopped for good (401 or closed by us): nothing else to do.
  });

  return () => controller.abort();
}

function parse<T>(data: string): T | null {
  try {
    return JSON.parse(data) as T;
  } catch {
    return null;
  }
}
