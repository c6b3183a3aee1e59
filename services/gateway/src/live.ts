/**
 * Server-sent events (WHATWG HTML §9.2) for web sessions: each notice from the bus goes as
 * `event: notice` to the clients whose person reaches its workspace (owns it or was added to it),
 * never to anyone else; a bus resync, and every new connection, sends `event: resync` so the client
 * re-reads the projection (a missed notice is healed, never trusted). A membership change while
 * connected (a WorkspaceCreated, MemberAdded or MemberRemoved notice) is looked up once: the clients
 * whose person now reaches that workspace, or no longer does, get it added or dropped and a resync.
 * Membership lookups run one at a time, in notice order, so a later one never undoes a newer answer.
 * Every approval replica follows the store and publishes each event's notice, so with N replicas a
 * notice arrives N times: the hub forwards a workspace's notice only when its revision is past the
 * highest it forwarded for that workspace (each publisher sends in store order, so a lower or equal
 * revision is one already sent); a client counting notices (the batch progress) counts each event once.
 * The built-in agent's model text deltas (`ChatDelta`, published by the worker, never stored) go as
 * `event: chat-delta` to the same people — those who reach the chat's workspace — as they arrive.
 */
import type { ServerResponse } from "node:http";
import type { NoticeBus } from "@gatehouse/live-notices";
import type { Logger } from "pino";
import type { GatewayMetrics } from "./metrics.ts";

/** Heartbeat comment interval, ms: keeps proxies from closing an idle stream. */
const HEARTBEAT_MS = 15_000;
/** Event types that change who reaches a workspace. */
const MEMBERSHIP = new Set(["WorkspaceCreated", "MemberAdded", "MemberRemoved"]);

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
  /** Highest notice revision forwarded per workspace id (duplicates from other publishers are dropped). */
  private readonly forwarded = new Map<string, number>();
  /** The membership work in flight; each step starts when the previous one ended. */
  private membershipWork: Promise<void> = Promise.resolve();

  constructor(
    bus: NoticeBus,
    private readonly metrics: GatewayMetrics,
    private readonly membership: MembershipSource,
    private readonly logger?: Logger,
  ) {
    this.unsubscribe = bus.subscribe({
      notice: (n) => {
        metrics.notices.inc();
        const last = this.forwarded.get(n.workspaceId);
        if (last !== undefined && n.revision <= last) return;
        this.forwarded.set(n.workspaceId, n.revision);
        let sent = false;
        for (const c of this.clients) {
          if (!c.workspaces.has(n.workspaceId)) continue;
          send(c.res, "notice", n);
          sent = true;
        }
        if (sent && n.publishedAtMs !== undefined) {
          metrics.noticeDeliverySeconds.observe(Math.max(0, Date.now() - n.publishedAtMs) / 1000);
        }
        if (MEMBERSHIP.has(n.type)) this.serially(() => this.reconcile(n.workspaceId));
      },
      chatDelta: (d) => {
        for (const c of this.clients) if (c.workspaces.has(d.workspaceId)) send(c.res, "chat-delta", d);
      },
      resync: (reason) => {
        metrics.resyncs.inc();
        for (const c of this.clients) send(c.res, "resync", { reason });
        // Notices may have been missed, membership changes among them: read everyone's reach again.
        const people = new Set([...this.clients].map((c) => c.person));
        this.serially(() => this.refresh(people));
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
    this.serially(() => this.refresh(new Set([person])));
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

  /** Runs `step` after every membership step queued before it (errors are logged, never thrown). */
  private serially(step: () => Promise<void>): void {
    this.membershipWork = this.membershipWork.then(step).catch((err) => {
      this.logger?.warn({ event: "sse.membership_lookup_failed", err: String(err) });
    });
  }

  /** After a membership event of `workspaceId`: clients that gained or lost it are told to resync. */
  private async reconcile(workspaceId: string): Promise<void> {
    if (this.clients.size === 0) return;
    const ws = await this.membership.membersOf(workspaceId);
    for (const c of this.clients) {
      const reaches = ws.owner === c.person || ws.members.includes(c.person);
      if (reaches === c.workspaces.has(workspaceId)) continue;
      if (reaches) {
        c.workspaces.add(workspaceId);
        send(c.res, "resync", { reason: `you now reach workspace ${workspaceId}: read everything once` });
      } else {
        c.workspaces.delete(workspaceId);
        send(c.res, "resync", {
          reason: `you no longer reach workspace ${workspaceId}: read everything once`,
        });
      }
    }
  }

  /** Reads each of `people`'s reach again; a client whose reach changed gets a resync. */
  private async refresh(people: Set<string>): Promise<void> {
    for (const person of people) {
      const reach = new Set(await this.membership.workspacesOf(person));
      for (const c of this.clients) {
        if (c.person !== person) continue;
        const changed = reach.size !== c.workspaces.size || [...reach].some((id) => !c.workspaces.has(id));
        c.workspaces = new Set(reach);
        if (changed)
          send(c.res, "resync", { reason: "the workspaces you reach changed: read everything once" });
      }
    }
  }
}

function send(res: ServerResponse, event: string, data: unknown): void {
  res.write(`event: ${event}\ndata: ${JSON.stringify(data)}\n\n`);
}
