/**
 * Library entry of the gateway: HTTP/JSON + server-sent events for the approver web app, over the
 * approval service (Decisions) and the kernel; live updates from a notice bus (NATS, or in-process
 * in `gatehouse dev`); people authenticated by OIDC bearer tokens and/or static dev tokens.
 * Contract: @gatehouse/gateway-contract. docs/architecture.md "Processes and how they talk".
 */
import { createAgentMcpServer } from "@gatehouse/agent-mcp";
import type { NoticeBus } from "@gatehouse/live-notices";
import { serviceTracing } from "@gatehouse/telemetry";
import pino, { type Logger } from "pino";
import type { Registry } from "prom-client";
import { buildApp } from "./app.ts";
import { AuthenticatorChain } from "./auth/chain.ts";
import { type DevToken, DevTokenAuthenticator } from "./auth/dev-tokens.ts";
import { OidcAuthenticator, type OidcOptions } from "./auth/oidc.ts";
import type { Authenticator } from "./auth/person.ts";
import { Backends } from "./backends.ts";
import { SseHub } from "./live.ts";
import { protectedResource } from "./mcp/protected-resource.ts";
import { DEFAULT_MCP_LIMITS, McpSessions } from "./mcp/sessions.ts";
import { createMetrics } from "./metrics.ts";

export { AuthenticatorChain } from "./auth/chain.ts";
export { type DevToken, DevTokenAuthenticator, loadDevTokensFile } from "./auth/dev-tokens.ts";
export {
  isMember,
  personIdOf,
  reachableWorkspaces,
  requireMember,
  requireOwnerOf,
  type WorkspaceMembership,
} from "./auth/membership.ts";
export { OidcAuthenticator, type OidcOptions } from "./auth/oidc.ts";
export type { Authenticator, Person } from "./auth/person.ts";
export { type ProtectedResource, protectedResource } from "./mcp/protected-resource.ts";
export { DEFAULT_MCP_LIMITS, type McpSessionLimits } from "./mcp/sessions.ts";
export { MCP_MAX_BODY_BYTES } from "./routes/mcp.ts";

/** Options of {@link startGateway}. */
export interface GatewayOptions {
  /** "host:port" of the approval service (Decisions). */
  approvalAddress: string;
  /** "host:port" of the kernel. */
  kernelAddress: string;
  /**
   * "host:port" of the built-in agent's AgentChats service (the worker's WORKER_GRPC_ADDR, or
   * in-process in `gatehouse dev`). Absent: every chat route answers 503 `agent_off` naming AGENT_ADDRESS.
   */
  agentAddress?: string;
  /** Where live notices come from (not closed by `close()`). */
  notices: NoticeBus;
  /** OIDC issuer settings; at least one of `oidc` and `devTokens` is required. */
  oidc?: OidcOptions;
  /** Static dev tokens (local use only). */
  devTokens?: DevToken[];
  /** Directory of the built web app (`web/dist`), served at `/`. */
  webDist?: string;
  /** Default "127.0.0.1". */
  host?: string;
  /** Default 0 (a free port). */
  port?: number;
  /**
   * The gateway's public origin, "https://host[:port]" (GATEWAY_PUBLIC_URL): the MCP endpoint's
   * resource identifier is `<publicUrl>/mcp`. Default: the URL it listens on.
   */
  publicUrl?: string;
  /** The MCP endpoint's bounds (default {@link DEFAULT_MCP_LIMITS}) and extra browser origins allowed to call it. */
  mcp?: { maxSessions?: number; idleMs?: number; allowedOrigins?: string[] };
  /**
   * True while the process drains before it stops (main.ts: GATEWAY_DRAIN_SECONDS): answers carry
   * `Connection: close` so clients reconnect, through the load balancer, to another replica.
   */
  draining?: () => boolean;
  /**
   * The sandbox's weakened protections (GATEHOUSE_SANDBOX_WEAKENED, set by the Helm chart), reported
   * by `/healthz` as `sandboxWeakened`; absent or empty: nothing is reported.
   */
  sandboxWeakened?: readonly string[];
  logger?: Logger;
}

/** A running gateway. */
export interface Gateway {
  port: number;
  /** "http://host:port". */
  url: string;
  /** The MCP endpoint's public URL, `<publicUrl>/mcp` (agents add `?workspace=<id>`). */
  mcpUrl: string;
  metrics: Registry;
  /**
   * Ends event streams and MCP sessions, stops accepting connections, waits for the requests under
   * way to be answered, then closes the gRPC clients.
   */
  close(): Promise<void>;
}

/**
 * Starts the gateway.
 * @throws Error when neither OIDC nor dev tokens are configured, or the port cannot be bound.
 */
export async function startGateway(options: GatewayOptions): Promise<Gateway> {
  const chain: Authenticator[] = [];
  if (options.devTokens?.length) chain.push(new DevTokenAuthenticator(options.devTokens));
  if (options.oidc) chain.push(new OidcAuthenticator(options.oidc));
  if (chain.length === 0) {
    throw new Error(
      "the gateway needs a way to authenticate people: configure OIDC (OIDC_ISSUER, OIDC_AUDIENCE) or dev tokens",
    );
  }
  const logger = (options.logger ?? pino({ level: "silent" })).child({ component: "gateway" });
  const metrics = createMetrics();
  // Tracing (off unless the process started it): a SERVER span per HTTP request (/api, /mcp), CLIENT
  // spans for the approval and kernel calls it makes.
  const tracing = serviceTracing("gateway");
  tracing.countDroppedSpansOn(metrics.registry);
  const backends = new Backends(
    options.approvalAddress,
    options.kernelAddress,
    tracing.grpcClientOptions(),
    options.agentAddress,
  );
  const hub = new SseHub(
    options.notices,
    metrics,
    {
      workspacesOf: async (person) =>
        (await backends.kernelCall(backends.kernel.listWorkspaces, { person })).workspaces.map((w) => w.id),
      membersOf: (workspaceId) => backends.kernelCall(backends.kernel.getWorkspace, { workspaceId }),
    },
    logger,
  );
  const sessions = new McpSessions(
    {
      maxSessions: options.mcp?.maxSessions ?? DEFAULT_MCP_LIMITS.maxSessions,
      idleMs: options.mcp?.idleMs ?? DEFAULT_MCP_LIMITS.idleMs,
    },
    ({ workspaceId, chatId, startedBy }) =>
      createAgentMcpServer({
        kernel: backends.kernel,
        // The gateway's own Connections client (traced like its other backends' calls).
        connections: backends.connections,
        workspaceId,
        chatId,
        startedBy,
        surface: "mcp-http",
        logger,
      }),
    metrics,
    logger,
  );
  // Known once listening (port 0 picks a free port); no request arrives before.
  let listeningUrl = "";
  const oidcForResource = options.oidc
    ? { issuer: options.oidc.issuer, scope: options.oidc.scope ?? "openid profile email" }
    : undefined;
  let resource: ReturnType<typeof protectedResource> | undefined;
  let origins: Set<string> | undefined;
  const app = await buildApp({
    tracing,
    backends,
    authenticator: new AuthenticatorChain(chain),
    hub,
    metrics,
    logger,
    clientConfig: {
      oidc: options.oidc?.clientId
        ? {
            issuer: options.oidc.issuer,
            clientId: options.oidc.clientId,
            scope: options.oidc.scope ?? "openid profile email",
          }
        : null,
      devTokens: (options.devTokens?.length ?? 0) > 0,
    },
    ...(options.webDist ? { webDist: options.webDist } : {}),
    ...(options.draining ? { draining: options.draining } : {}),
    ...(options.sandboxWeakened?.length ? { sandboxWeakened: options.sandboxWeakened } : {}),
    mcp: {
      sessions,
      resource: () => {
        resource ??= protectedResource(options.publicUrl ?? listeningUrl, oidcForResource);
        return resource;
      },
      allowedOrigins: () => {
        origins ??= allowedOrigins(listeningUrl, options.publicUrl, options.mcp?.allowedOrigins ?? []);
        return origins;
      },
    },
  });
  const host = options.host ?? "127.0.0.1";
  try {
    await app.listen({ host, port: options.port ?? 0 });
  } catch (err) {
    await sessions.closeAll();
    hub.close();
    backends.close();
    throw err;
  }
  const address = app.server.address();
  const port = typeof address === "object" && address ? address.port : 0;
  const url = `http://${host.includes(":") ? `[${host}]` : host}:${port}`;
  listeningUrl = url;
  logger.info({
    event: "listening",
    host,
    port,
    oidc: !!options.oidc,
    devTokens: options.devTokens?.length ?? 0,
  });
  return {
    port,
    url,
    mcpUrl: `${new URL(options.publicUrl ?? url).origin}/mcp`,
    metrics: metrics.registry,
    async close() {
      hub.close();
      await sessions.closeAll();
      await app.close();
      backends.close();
    },
  };
}

/**
 * Origins whose pages may call `/mcp`: the gateway's own (as listened on, with "localhost" for a
 * loopback address, and its public origin), plus `extra`.
 */
function allowedOrigins(listeningUrl: string, publicUrl: string | undefined, extra: string[]): Set<string> {
  const own = new URL(listeningUrl);
  const set = new Set([own.origin, ...extra.map((o) => new URL(o).origin)]);
  if (publicUrl) set.add(new URL(publicUrl).origin);
  if (own.hostname === "127.0.0.1" || own.hostname === "[::1]")
    set.add(`${own.protocol}//localhost:${own.port}`);
  return set;
}
