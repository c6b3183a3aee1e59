/**
 * The gateway's MCP sessions: one Streamable HTTP transport and one agent MCP server per session,
 * bound to the person who opened it and to one workspace; at most `maxSessions` at once; a session
 * that has had no POST under way for `idleMs` is closed, its GET stream included (a listening stream
 * alone does not keep a session: its client gets 404 at its next request and starts a new session,
 * as the MCP transport specifies).
 */
import { randomUUID } from "node:crypto";
import type { ServerResponse } from "node:http";
import type { AgentMcpSession } from "@gatehouse/agent-mcp";
import { StreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/streamableHttp.js";
import type { Logger } from "pino";
import { personIdOf } from "../auth/membership.ts";
import type { Person } from "../auth/person.ts";
import { HttpError } from "../backends.ts";
import type { GatewayMetrics } from "../metrics.ts";
import { MeteredTransport } from "./metered-transport.ts";

/** Bounds of the session table. */
export interface McpSessionLimits {
  /** Most sessions open at once (GATEWAY_MCP_MAX_SESSIONS); a new one past it is refused with 503. */
  maxSessions: number;
  /** A session with no POST under way for this long is closed, ms (GATEWAY_MCP_IDLE_MINUTES). */
  idleMs: number;
}

/** Defaults of {@link McpSessionLimits}: 1,000 sessions, 30 minutes idle. */
export const DEFAULT_MCP_LIMITS: McpSessionLimits = { maxSessions: 1000, idleMs: 30 * 60_000 };

/** Makes the agent MCP server of a new session (`createAgentMcpServer` in the gateway). */
/** `startedBy` is the opener as membership names them ("user:<subject>", personIdOf). */
export type AgentServerFactory = (session: {
  workspaceId: string;
  chatId: string;
  startedBy: string;
}) => AgentMcpSession;

/** One open session. */
export interface McpSession {
  /** The Mcp-Session-Id, also the chat id the kernel stamps the agent's calls with. */
  id: string;
  /** The person who opened it (Person.subject); only they may use it. */
  subject: string;
  workspaceId: string;
  transport: StreamableHTTPServerTransport;
}

interface Entry extends McpSession {
  agent: AgentMcpSession;
  /** POST requests under way (a tool call running counts; a GET stream does not). */
  inFlight: number;
  /** When the last request ended, Date.now(). */
  idleSince: number;
}

/** The session table. */
export class McpSessions {
  private readonly entries = new Map<string, Entry>();
  /** Sessions being opened (initialize under way), counted against the maximum. */
  private opening = 0;
  private readonly sweeper: NodeJS.Timeout;

  constructor(
    private readonly limits: McpSessionLimits,
    private readonly makeAgent: AgentServerFactory,
    private readonly metrics: GatewayMetrics,
    private readonly logger: Logger,
  ) {
    this.sweeper = setInterval(
      () => this.sweep(Date.now()),
      Math.max(250, Math.min(limits.idleMs / 4, 60_000)),
    );
    this.sweeper.unref();
  }

  /** The open session `id`, or undefined. */
  get(id: string): McpSession | undefined {
    return this.entries.get(id);
  }

  /** Open sessions. */
  get size(): number {
    return this.entries.size;
  }

  /**
   * Opens a session for `person` on `workspaceId` and hands it the initialize request: the session
   * is kept once the transport has initialized it, and closed again if the request did not. The
   * agent session records its ChatStarted (started by `personIdOf(person)`) first.
   * @throws HttpError 503 when `maxSessions` are open, naming the knob, or when the chat could not
   *   be recorded or the workspace opened (the kernel's reason).
   */
  async open(
    person: Person,
    workspaceId: string,
    handle: (transport: StreamableHTTPServerTransport) => Promise<void>,
  ): Promise<void> {
    if (this.entries.size + this.opening >= this.limits.maxSessions) {
      this.metrics.mcpSessionEvents.inc({ event: "refused_limit" });
      throw new HttpError(
        503,
        "unavailable",
        `the gateway already holds its maximum of ${this.limits.maxSessions} MCP sessions (GATEWAY_MCP_MAX_SESSIONS); ` +
          `close sessions you no longer use (DELETE /mcp) or retry once idle ones expire (after ${idleText(this.limits.idleMs)})`,
      );
    }
    this.opening++;
    const { subject } = person;
    const id = randomUUID();
    let agent: AgentMcpSession | undefined;
    let entry: Entry | undefined;
    try {
      agent = this.makeAgent({ workspaceId, chatId: id, startedBy: personIdOf(person) });
      const transport = new StreamableHTTPServerTransport({
        sessionIdGenerator: () => id,
        onsessioninitialized: () => {
          if (!agent) return;
          entry = { id, subject, workspaceId, transport, agent, inFlight: 0, idleSince: Date.now() };
          this.entries.set(id, entry);
          this.metrics.mcpSessions.set(this.entries.size);
          this.metrics.mcpSessionEvents.inc({ event: "opened" });
          this.logger.info({ event: "mcp_session_opened", session: id, workspace: workspaceId, subject });
        },
      });
      transport.onclose = () => this.forget(id, "closed");
      await agent.ready.catch((err: Error) => {
        throw new HttpError(503, "unavailable", err.message);
      });
      await agent.server.connect(new MeteredTransport(transport, this.metrics));
      await handle(transport);
      if (entry) entry.idleSince = Date.now();
    } finally {
      this.opening--;
      // A session that never became an entry (its start failed, or the request was not an
      // initialize) is closed here, whichever way the request ended, so its watch does not leak.
      if (!entry) await agent?.close().catch(() => {});
    }
  }

  /** Counts a POST on `session` as under way until `res` closes (idle expiry waits for it). */
  track(session: McpSession, res: ServerResponse): void {
    const entry = this.entries.get(session.id);
    if (!entry) return;
    entry.inFlight++;
    res.once("close", () => {
      entry.inFlight--;
      entry.idleSince = Date.now();
    });
  }

  /** Closes the sessions idle since before `now - idleMs`. */
  sweep(now: number): void {
    for (const entry of this.entries.values()) {
      if (entry.inFlight > 0 || now - entry.idleSince < this.limits.idleMs) continue;
      this.logger.info({ event: "mcp_session_expired", session: entry.id, workspace: entry.workspaceId });
      this.forget(entry.id, "expired");
      void entry.transport.close().catch(() => {});
    }
  }

  /** Closes every session (gateway shutdown): their streams end, their agent servers stop. */
  async closeAll(): Promise<void> {
    clearInterval(this.sweeper);
    const all = [...this.entries.values()];
    await Promise.all(all.map((e) => e.transport.close().catch(() => {})));
    for (const e of all) this.forget(e.id, "closed");
  }

  private forget(id: string, event: "closed" | "expired"): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    this.entries.delete(id);
    this.metrics.mcpSessions.set(this.entries.size);
    this.metrics.mcpSessionEvents.inc({ event });
    void entry.agent
      .close()
      .catch((err) =>
        this.logger.warn({ event: "mcp_session_close_failed", session: id, err: (err as Error).message }),
      );
  }
}

/** "30 min", or "1.5 s" under a minute. */
function idleText(ms: number): string {
  return ms >= 60_000 ? `${Math.round(ms / 60_000)} min` : `${ms / 1000} s`;
}
