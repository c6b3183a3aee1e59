/**
 * The MCP endpoint for agents, `/mcp?workspace=<id>` (Streamable HTTP, MCP 2025-11-25): POST carries
 * JSON-RPC messages, GET opens the session's server-to-client stream, DELETE ends the session. Every
 * request is checked in this order: Origin (a browser page from an origin not allowed is refused,
 * against DNS rebinding; an allowed one gets CORS headers, and OPTIONS answers its preflight), bearer
 * token (401 with the protected-resource challenge), workspace membership, then the session (it
 * belongs to the person and the workspace it was opened for). The protected-resource
 * metadata (RFC 9728) is served at `/.well-known/oauth-protected-resource[/mcp]`. Errors are JSON-RPC
 * error bodies with no id, with the HTTP status the transport specification asks for.
 */

import type { IncomingMessage } from "node:http";
import { MAX_SNIPPET_BYTES } from "@gatehouse/agent-mcp";
import { isInitializeRequest } from "@modelcontextprotocol/sdk/types.js";
import type { FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { z } from "zod";
import { bearerToken } from "../auth/bearer.ts";
import { requireMember } from "../auth/membership.ts";
import { type Authenticator, Forbidden, Unauthenticated } from "../auth/person.ts";
import { type Backends, HttpError } from "../backends.ts";
import { MCP_PATH, METADATA_PATH, type ProtectedResource } from "../mcp/protected-resource.ts";
import type { McpSessions } from "../mcp/sessions.ts";
import type { GatewayMetrics } from "../metrics.ts";
import { WorkspaceParam } from "./params.ts";

/**
 * Largest request body `/mcp` reads, bytes (1 MiB; the rest of the API takes 256 KiB). A snippet
 * is at most 512 KiB (`MAX_SNIPPET_BYTES`, the kernel's limit too), so every snippet that could run
 * fits, with room for JSON escaping, and a bigger one gets execute_code's tool error naming that
 * limit; a bigger body is refused with 413 naming both limits, before it is read.
 */
export const MCP_MAX_BODY_BYTES = 1024 * 1024;

/** What the MCP routes need. */
export interface McpRouteDeps {
  backends: Backends;
  authenticator: Authenticator;
  sessions: McpSessions;
  metrics: GatewayMetrics;
  /** The endpoint as a protected resource (known once the gateway listens). */
  resource: () => ProtectedResource;
  /** Origins whose pages may call `/mcp` (requests without an Origin header are not from a page). */
  allowedOrigins: () => ReadonlySet<string>;
}

const McpQuery = z.object({
  workspace: z
    .string({
      error: (issue) =>
        Array.isArray(issue.input)
          ? `give one workspace: ?workspace= appears ${issue.input.length} times in the MCP URL; an MCP session serves one workspace, e.g. /mcp?workspace=w445279630a`
          : "add ?workspace=<id> to the MCP URL, e.g. /mcp?workspace=w445279630a",
    })
    .pipe(WorkspaceParam.shape.ws),
});

/** The methods `/mcp` answers (Streamable HTTP); another is 405 with this as `Allow`. */
const MCP_METHODS = "GET, POST, DELETE";

/** What a browser needs to call `/mcp` from an allowed `origin` and read the session id and challenge. */
function corsHeaders(origin: string): Record<string, string> {
  return {
    "access-control-allow-origin": origin,
    "access-control-allow-methods": MCP_METHODS,
    "access-control-allow-headers":
      "authorization, content-type, accept, mcp-session-id, mcp-protocol-version, last-event-id",
    "access-control-expose-headers": "mcp-session-id, www-authenticate",
    "access-control-max-age": "600",
    vary: "Origin",
  };
}

/** A JSON-RPC error body with no id, as the Streamable HTTP transport answers HTTP-level errors. */
function rpcError(code: number, message: string) {
  return { jsonrpc: "2.0" as const, error: { code, message }, id: null };
}

/** Registers `/mcp` and the protected-resource metadata routes. */
export async function mcpRoutes(app: FastifyInstance, deps: McpRouteDeps): Promise<void> {
  await app.register(async (scope) => {
    scope.setErrorHandler((err, req, reply) => {
      const send = (status: number, code: number, message: string) =>
        reply.status(status).type("application/json").send(rpcError(code, message));
      if (err instanceof Unauthenticated) {
        deps.metrics.mcpSessionEvents.inc({ event: "refused_auth" });
        const refused = req.headers.authorization ? { description: err.message } : undefined;
        reply.header("www-authenticate", deps.resource().challenge(refused));
        return send(401, -32001, err.message);
      }
      if (err instanceof Forbidden) return send(403, -32003, err.message);
      if (err instanceof HttpError) return send(err.statusCode, -32000, err.message);
      if (err instanceof z.ZodError) return send(400, -32600, err.issues.map((i) => i.message).join("; "));
      const status = (err as { statusCode?: number }).statusCode;
      if (status === 413) {
        return send(
          413,
          -32600,
          `the request body is larger than the MCP endpoint's limit of ${MCP_MAX_BODY_BYTES} bytes (1 MiB); ` +
            `execute_code takes snippets of at most ${MAX_SNIPPET_BYTES / 1024} KiB: split the work into smaller snippets`,
        );
      }
      if (status === 415)
        return send(
          415,
          -32600,
          "send JSON-RPC messages as application/json (Content-Type: application/json)",
        );
      if (status === 400) return send(400, -32700, `Parse error: ${(err as Error).message}`);
      req.log.error({ component: "gateway", event: "mcp_request_failed", err });
      return send(500, -32603, "the gateway failed; see its log");
    });

    const metadata = async (_req: FastifyRequest, reply: FastifyReply) =>
      reply.header("access-control-allow-origin", "*").send(deps.resource().metadata);
    scope.get(METADATA_PATH, metadata);
    scope.get(`${METADATA_PATH}${MCP_PATH}`, metadata);

    // Origin first, before the body is read: a page from a foreign origin is refused (DNS rebinding);
    // one from an allowed origin gets the CORS headers a browser needs to read the answer.
    const checkOrigin = async (req: FastifyRequest, reply: FastifyReply) => {
      const origin = req.headers.origin;
      if (origin === undefined) return;
      if (!deps.allowedOrigins().has(origin)) {
        deps.metrics.mcpSessionEvents.inc({ event: "refused_origin" });
        throw new HttpError(
          403,
          "forbidden",
          `a page from origin ${origin} may not call the MCP endpoint (DNS rebinding protection); ` +
            "an administrator can allow a browser-based client's origin with GATEWAY_MCP_ALLOWED_ORIGINS",
        );
      }
      for (const [name, value] of Object.entries(corsHeaders(origin))) reply.raw.setHeader(name, value);
    };
    scope.options(MCP_PATH, { onRequest: checkOrigin }, async (_req, reply) => reply.status(204).send());

    scope.route({
      method: ["PUT", "PATCH"],
      url: MCP_PATH,
      handler: async (req, reply) =>
        reply
          .status(405)
          .header("allow", MCP_METHODS)
          .type("application/json")
          .send(
            rpcError(
              -32000,
              `${req.method} is not a method of the MCP endpoint; it answers ${MCP_METHODS} (MCP Streamable HTTP)`,
            ),
          ),
    });

    scope.route({
      method: ["GET", "POST", "DELETE"],
      url: MCP_PATH,
      bodyLimit: MCP_MAX_BODY_BYTES,
      onRequest: checkOrigin,
      handler: async (req, reply) => {
        const person = await deps.authenticator.authenticate(bearerToken(req));
        const { workspace } = McpQuery.parse(req.query);
        // Every request, not only the first: a person who is no longer a member is refused at once.
        await requireMember(deps.backends, person, workspace);
        const sessionId = req.headers["mcp-session-id"];
        if (typeof sessionId === "string") {
          const session = deps.sessions.get(sessionId);
          if (!session)
            throw new HttpError(
              404,
              "not_found",
              "no such MCP session: it was closed or expired; start a new session with initialize",
            );
          if (session.subject !== person.subject)
            throw new Forbidden(
              "this MCP session was opened by another person; start your own with initialize",
            );
          if (session.workspaceId !== workspace)
            throw new HttpError(
              400,
              "invalid_argument",
              `this MCP session is bound to workspace ${session.workspaceId}; use /mcp?workspace=${session.workspaceId}, or start a new session for ${workspace}`,
            );
          reply.hijack();
          if (req.method === "POST") deps.sessions.track(session, reply.raw);
          await session.transport.handleRequest(req.raw as IncomingMessage, reply.raw, req.body);
          return;
        }
        const body = req.body;
        const initializes = Array.isArray(body) ? body.some(isInitializeRequest) : isInitializeRequest(body);
        if (req.method !== "POST" || !initializes) {
          throw new HttpError(
            400,
            "invalid_request",
            "Bad Request: no Mcp-Session-Id header; start a session with an initialize request, then send the Mcp-Session-Id it answers with on every request",
          );
        }
        await deps.sessions.open(person, workspace, async (transport) => {
          reply.hijack();
          await transport.handleRequest(req.raw as IncomingMessage, reply.raw, body);
        });
      },
    });
  });
}
