/**
 * The gateway's HTTP application (fastify): bearer authentication on every `/api` route, the read,
 * decision and event routes, error bodies (`ApiError`), `/healthz`, the MCP endpoint for agents
 * (`/mcp`, routes/mcp.ts, with its own authentication and error bodies), and the built web app
 * (`web/dist`) at `/` when one is given.
 */

import { existsSync } from "node:fs";
import { createServer, type RequestListener } from "node:http";
import { join } from "node:path";
import fastifyStatic from "@fastify/static";
import type { ApiError, ClientConfig } from "@gatehouse/gateway-contract";
import { type ServiceTracing, setHttpRoute } from "@gatehouse/telemetry";
import Fastify, { type FastifyBaseLogger, type FastifyInstance, LogController } from "fastify";
import type { Logger } from "pino";
import { ZodError } from "zod";
import { bearerToken } from "./auth/bearer.ts";
import {
  personIdOf,
  reachableWorkspaces,
  requireMember,
  type WorkspaceMembership,
} from "./auth/membership.ts";
import { type Authenticator, Forbidden, type Person, Unauthenticated } from "./auth/person.ts";
import { type Backends, HttpError } from "./backends.ts";
import type { SseHub } from "./live.ts";
import type { GatewayMetrics } from "./metrics.ts";
import { chatRoutes } from "./routes/chats.ts";
import { connectionRoutes } from "./routes/connections.ts";
import { decisionRoutes } from "./routes/decisions.ts";
import { executionRoutes } from "./routes/executions.ts";
import { type McpRouteDeps, mcpRoutes } from "./routes/mcp.ts";
import { notificationRoutes } from "./routes/notifications.ts";
import { WorkspaceParam } from "./routes/params.ts";
import { readRoutes } from "./routes/reads.ts";
import { workspaceRoutes } from "./routes/workspaces.ts";
import { zodErrorMessage } from "./zod-message.ts";

declare module "fastify" {
  interface FastifyRequest {
    /** Set by the auth hook on every `/api` route. */
    person: Person;
    /** Set on every `/api/workspaces/:ws/...` route once the person is found to reach `:ws`. */
    membership: WorkspaceMembership;
  }
}

/** What the application needs. */
export interface AppDeps {
  /** The gateway's tracing: with it on, each request is a SERVER span named after its route. */
  tracing?: ServiceTracing;
  backends: Backends;
  authenticator: Authenticator;
  hub: SseHub;
  metrics: GatewayMetrics;
  logger: Logger;
  /** What GET /api/config tells the web app about signing in. */
  clientConfig: ClientConfig;
  /** Directory of the built web app (index.html); absent or missing: `/` explains how to build it. */
  webDist?: string;
  /** The MCP endpoint's sessions, protected-resource description and allowed origins. */
  mcp: Pick<McpRouteDeps, "sessions" | "resource" | "allowedOrigins">;
  /**
   * True while the gateway drains before it stops: every answer then carries `Connection: close`, so
   * a client's next request opens a new connection, which the load balancer sends to another replica.
   */
  draining?: () => boolean;
  /**
   * The sandbox's weakened protections (GATEHOUSE_SANDBOX_WEAKENED), e.g. ["networkPolicy.enabled=false"]:
   * when not empty, `/healthz` answers `{ ok: true, sandboxWeakened: [...] }` so a check sees it.
   */
  sandboxWeakened?: readonly string[];
}

/** Builds the application (not listening). */
export async function buildApp(deps: AppDeps): Promise<FastifyInstance> {
  const tracing = deps.tracing;
  const app = Fastify({
    // Traced: every request runs in its span, from the first byte to the response's end.
    ...(tracing?.enabled
      ? { serverFactory: (handler: RequestListener) => createServer(tracing.traceHttpListener(handler)) }
      : {}),
    loggerInstance: deps.logger as unknown as FastifyBaseLogger,
    // Requests are counted in metrics, not logged one by one.
    logController: new LogController({ disableRequestLogging: true }),
    bodyLimit: 256 * 1024,
    // A request on a kept-alive connection while the server closes (after the drain) is still served,
    // not answered 503: the services behind it are up, and the connection closes once it is answered.
    return503OnClosing: false,
  });
  app.decorateRequest("person", undefined as unknown as Person);
  app.decorateRequest("membership", undefined as unknown as WorkspaceMembership);

  const draining = deps.draining;
  if (draining) {
    app.addHook("onRequest", async (_req, reply) => {
      if (draining()) reply.header("connection", "close");
    });
  }
  if (tracing?.enabled) {
    app.addHook("onRequest", async (req) => setHttpRoute(req.raw, req.routeOptions.url ?? "unmatched"));
  }
  app.addHook("onRequest", async (req) => {
    if (!req.url.startsWith("/api/") || req.url === "/api/config") return;
    req.person = await deps.authenticator.authenticate(bearerToken(req));
  });
  // Membership before any handler: every route under /api/workspaces/:ws (present and future)
  // answers 403 to a person who neither owns the workspace nor was added to it, calling nothing else.
  app.addHook("preHandler", async (req) => {
    if (!req.routeOptions.url?.startsWith("/api/workspaces/:ws")) return;
    const { ws } = WorkspaceParam.parse(req.params);
    req.membership = await requireMember(deps.backends, req.person, ws);
  });
  app.addHook("onResponse", async (req, reply) => {
    if (!req.url.startsWith("/api/") || req.routeOptions.url === "/api/events") return;
    deps.metrics.requestSeconds.observe(
      { route: req.routeOptions.url ?? "unknown", method: req.method, status: String(reply.statusCode) },
      reply.elapsedTime / 1000,
    );
  });

  app.setErrorHandler((err, req, reply) => {
    const send = (status: number, code: string, message: string) => {
      const body: ApiError = { error: { code, message } };
      return reply.status(status).send(body);
    };
    if (err instanceof Unauthenticated) {
      reply.header("www-authenticate", 'Bearer realm="gatehouse"');
      return send(401, "unauthenticated", err.message);
    }
    if (err instanceof Forbidden) return send(403, "forbidden", err.message);
    if (err instanceof HttpError) return send(err.statusCode, err.code, err.message);
    if (err instanceof ZodError) {
      return send(400, "invalid_argument", zodErrorMessage(err));
    }
    const status = (err as { statusCode?: number }).statusCode;
    if (status === 415)
      return send(415, "unsupported_media_type", "send the body as JSON (Content-Type: application/json)");
    if (status === 403) return send(403, "forbidden", (err as Error).message);
    if (status && status >= 400 && status < 500) return send(status, "bad_request", (err as Error).message);
    req.log.error({ component: "gateway", event: "request_failed", err, route: req.routeOptions.url });
    return send(500, "internal", "the gateway failed; see its log");
  });

  app.setNotFoundHandler((req, reply) => {
    const body: ApiError = {
      error: {
        code: "not_found",
        message: req.url.startsWith("/api/")
          ? "no such API route; see @gatehouse/gateway-contract"
          : "no such page; the web app's pages live under /#/ (e.g. /#/ws/<workspace>/actions/<id>)",
      },
    };
    return reply.status(404).send(body);
  });

  // 503 while draining, like the ops port's: a load balancer probing this port stops sending here too.
  // A weakened sandbox is said on every answer (the install acknowledged it; monitoring should see it).
  const weakened = deps.sandboxWeakened?.length ? { sandboxWeakened: [...deps.sandboxWeakened] } : {};
  app.get("/healthz", async (_req, reply) =>
    draining?.()
      ? reply.status(503).send({ ok: false, draining: true, ...weakened })
      : { ok: true, ...weakened },
  );
  app.get("/api/config", async (): Promise<ClientConfig> => deps.clientConfig);

  readRoutes(app, deps.backends);
  decisionRoutes(app, deps.backends, deps.metrics);
  connectionRoutes(app, deps.backends);
  chatRoutes(app, deps.backends);
  executionRoutes(app, deps.backends);
  workspaceRoutes(app, deps.backends);
  notificationRoutes(app, deps.backends);
  app.get("/api/events", async (req, reply) => {
    // Read before the stream opens, so a notice arriving meanwhile is covered by the first resync.
    const reach = (await reachableWorkspaces(deps.backends, req.person)).map((w) => w.id);
    reply.hijack();
    deps.hub.attach(reply.raw, personIdOf(req.person), new Set(reach));
  });
  await mcpRoutes(app, {
    ...deps.mcp,
    backends: deps.backends,
    authenticator: deps.authenticator,
    metrics: deps.metrics,
  });

  if (deps.webDist && existsSync(join(deps.webDist, "index.html"))) {
    await app.register(fastifyStatic, { root: deps.webDist, index: ["index.html"] });
  } else {
    app.get("/", async (_req, reply) =>
      reply
        .status(503)
        .type("text/plain")
        .send(
          "The approver web app is not built: run `npm run build` (it builds web/dist), then restart the gateway.\n",
        ),
    );
  }
  return app;
}
