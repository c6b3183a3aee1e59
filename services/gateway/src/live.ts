/**
 * Server-sent events (WHATWG HTML §9.2) for web sessions: every notice from the bus goes to every
 * connected client as `event: notice`; a bus resync, and every new connection, sends `event: resync`
 * so the client re-reads the projection (a missed notice is healed, never trusted).
 */
import type { ServerResponse } from "node:http";
import type { LogNotice } from "@gatehouse/gateway-contract";
import type { NoticeBus } from "@gatehouse/live-notices";
import type { GatewayMetrics } from "./metrics.ts";

/** Heartbeat comment interval, ms: keeps proxies from closing an idle stream. */
const HEARTBEAT_MS = 15_000;

interface Client {
  res: ServerResponse;
}

/** Fans notices from the bus out to SSE clients. */
export class SseHub {
  private readonly clients = new Set<Client>();
  private readonly unsubscribe: () => void;
  private readonly heartbeat: NodeJS.Timeout;

  constructor(
    bus: NoticeBus,
    private readonly metrics: GatewayMetrics,
  ) {
    this.unsubscribe = bus.subscribe({
      notice: (n) => {
        metrics.notices.inc();
        this.broadcast("notice", n);
      },
      resync: (reason) => {
        metrics.resyncs.inc();
        this.broadcast("resync", { reason });
      },
    });
    this.heartbeat = setInterval(() => {
      for (const c of this.clients) c.res.write(": heartbeat\n\n");
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /** Takes over `res` as an event stream until the client goes away. */
  attach(res: ServerResponse): void {
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
    const client: Client = { res };
    this.clients.add(client);
    this.metrics.sseClients.set(this.clients.size);
    res.write("retry: 1000\n\n");
    send(res, "resync", { reason: "connected: read everything once" });
    res.on("close", () => {
      this.clients.delete(client);
      this.metrics.sseClients.set(this.clients.size);
    });
  }

  /** Number of connected clients. */
  get size(): number {
    return this.clients.size;
  }

  /** Ends every stream and stops listening to the bus. */
  close(): void {
    this.unsubscribe();
    clearInterval(this.heartbeat);
    for (const c of this.clients) c.res.end();
    this.clients.clear();
    this.metrics.sseClients.set(0);
  }

  private broadcast(event: "notice" | "resync", data: LogNotice | { reason: string }): void {
    for (const c of this.clients) send(c.res, event, data);
  }
}

function send(res: ServerResponse, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}
