/**
 * Server-sent events (WHATWG HTML §9.2) for web sessions: each notice from the bus goes as
 * `event: notice` to the clients whose person reaches its workspace (owns it or was added to it),
 * never to anyone else; a bus resync, and every new connection, sends `event: resync` so the client
 * re-reads the projection (a missed notice is healed, never trusted). A membership change while
 * connected (a MemberAdded or WorkspaceCreated notice of a workspace a client does not reach yet)
 * is looked up once, and the clients it now reaches get that workspace and a resync.
 */
import type { ServerResponse } from "node:http";
import type { NoticeBus } from "@gatehouse/live-notices";
import type { Logger } from "pino";
import type { GatewayMetrics } from "./metrics.ts";

/** Heartbeat comment interval, ms: keeps proxies from closing an idle stream. */
const HEARTBEAT_MS = 15_000;
/** Event types that can let a person reach a workspace they did not reach before. */
const JOINING = new Set(["WorkspaceCreated", "MemberAdded"]);

interface Client {
  res: ServerResponse;
  /** "user:<subject>". */
  person: string;
  /** Ids of the workspaces the person reaches. */
  workspaces: Set<string>;
}

/** How the hub learns who reaches what (the kernel, through the gateway's backends). */
export interface MembershipSource {
  /** Ids of the workspaces `person` ("user:<subject>") owns or was added to. */
  workspacesOf(person: string): Promise<string[]>;
  /** Owner and members of one workspace ("user:<subject>" each). */
  membersOf(workspaceId: string): Promise<{ owner: string; members: string[] }>;
}

/** Fans notices from the bus out to SSE clients. */
export class SseHub {
  private readonly clients = new Set<Client>();
  private readonly unsubscribe: () => void;
  private readonly heartbeat: NodeJS.Timeout;

  constructor(
    bus: NoticeBus,
    private readonly metrics: GatewayMetrics,
    private readonly membership: MembershipSource,
    private readonly logger?: Logger,
  ) {
    this.unsubscribe = bus.subscribe({
      notice: (n) => {
        metrics.notices.inc();
        for (const c of this.clients) if (c.workspaces.has(n.workspaceId)) send(c.res, "notice", n);
        if (JOINING.has(n.type)) void this.joined(n.workspaceId);
      },
      resync: (reason) => {
        metrics.resyncs.inc();
        for (const c of this.clients) send(c.res, "resync", { reason });
        // Notices may have been missed, membership changes among them: read everyone's reach again.
        void this.refresh(new Set([...this.clients].map((c) => c.person)));
      },
    });
    this.heartbeat = setInterval(() => {
      for (const c of this.clients) c.res.write(": heartbeat\n\n");
    }, HEARTBEAT_MS);
    this.heartbeat.unref();
  }

  /**
   * Takes over `res` as an event stream until the client goes away.
   * @param person "user:<subject>" of the signed-in person.
   * @param workspaces ids of the workspaces they reach, read before the stream opened.
   */
  attach(res: ServerResponse, person: string, workspaces: Set<string>): void {
    res.writeHead(200, {
      "content-type": "text/event-stream; charset=utf-8",
      "cache-control": "no-cache, no-transform",
      connection: "keep-alive",
      "x-accel-buffering": "no",
    });
    const client: Client = { res, person, workspaces };
    this.clients.add(client);
    this.metrics.sseClients.set(this.clients.size);
    res.write("retry: 1000\n\n");
    send(res, "resync", { reason: "connected: read everything once" });
    // A membership change between the caller's read of `workspaces` and now sent its notice before
    // this client was listening: read the reach once more now that it is.
    void this.refresh(new Set([person]));
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

  /** After a membership event of `workspaceId`: the clients that now reach it get it and a resync. */
  private async joined(workspaceId: string): Promise<void> {
    if (![...this.clients].some((c) => !c.workspaces.has(workspaceId))) return;
    let ws: { owner: string; members: string[] };
    try {
      ws = await this.membership.membersOf(workspaceId);
    } catch (err) {
      this.logger?.warn({ event: "sse.membership_lookup_failed", workspaceId, err: String(err) });
      return;
    }
    for (const c of this.clients) {
      if (c.workspaces.has(workspaceId)) continue;
      if (ws.owner !== c.person && !ws.members.includes(c.person)) continue;
      c.workspaces.add(workspaceId);
      send(c.res, "resync", { reason: `you now reach workspace ${workspaceId}: read everything once` });
    }
  }

  /** Reads each of `people`'s reach again; a client that gained a workspace gets a resync. */
  private async refresh(people: Set<string>): Promise<void> {
    for (const person of people) {
      let reach: string[];
      try {
        reach = await this.membership.workspacesOf(person);
      } catch (err) {
        this.logger?.warn({ event: "sse.membership_refresh_failed", err: String(err) });
        return;
      }
      for (const c of this.clients) {
        if (c.person !== person) continue;
        const gained = reach.filter((id) => !c.workspaces.has(id));
        for (const id of gained) c.workspaces.add(id);
        if (gained.length > 0)
          send(c.res, "resync", { reason: "you now reach another workspace: read everything once" });
      }
    }
  }
}

function send(res: ServerResponse, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}
