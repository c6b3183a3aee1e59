/**
 * OpenSession for MCP: the kit's `serveSession` carries the stream and capnweb frames; this file
 * checks the `open` message against the MCP registry and builds the session's main object, the
 * binding target (one method per permitted tool plus getActionResult).
 */

import type { ApprovalQueue } from "@gatehouse/gatekeeper-kit";
import { checkOpenFields, type SessionHandlers } from "@gatehouse/gatekeeper-kit";
import type { SessionOpen } from "@gatehouse/proto";
import type { Logger } from "pino";
import { BindingService } from "./binding-service.ts";
import { createBindingTarget } from "./binding-target.ts";
import { loadCatalog } from "./catalog.ts";
import type { ConnectionPool } from "./connections.ts";
import { InvalidRequest } from "./errors.ts";
import type { RegistryConfig } from "./registry.ts";
import { type ResolvedResource, resolveResourceUrl } from "./resource-url.ts";

/** What a session needs from the service. */
export interface SessionDeps {
  registry: RegistryConfig;
  pool: ConnectionPool;
  approval: ApprovalQueue;
  logger: Logger;
}

/**
 * Checks the open message and resolves its resource. The trust used is the registry's verdict;
 * a caller claiming "vetted" for a byo resource is refused.
 * @throws InvalidRequest naming the field; the errors of `resolveResourceUrl`.
 */
export function checkOpen(open: SessionOpen, registry: RegistryConfig): ResolvedResource {
  checkOpenFields(open);
  const resource = resolveResourceUrl(open.url, registry);
  if (open.trust === "vetted" && resource.trust !== "vetted") {
    throw new InvalidRequest(
      `open.trust is "vetted" but ${resource.normalizedUrl} is not a vetted registry entry`,
    );
  }
  if (open.trust === "byo" && resource.trust === "vetted") return { ...resource, trust: "byo" };
  return resource;
}

/**
 * OpenSession's MCP part (the kit's `gatekeeperHandlers` serves it with `serveSession`): checks
 * the open message, loads the tool catalog and builds the binding target.
 */
export function mcpSessionHandlers(deps: SessionDeps): Omit<SessionHandlers, "onSessionChange"> {
  const log = deps.logger.child({ component: "session" });
  return {
    logger: log,
    noSuchMethodHint: "call one of its permitted tools or getActionResult (see the binding's .d.ts)",
    async start(open) {
      const resource = checkOpen(open, deps.registry);
      const catalog = await loadCatalog(deps.pool, resource);
      const ctx = {
        workspaceId: open.workspaceId,
        binding: open.binding,
        executionId: open.executionId,
        callerToken: open.callerToken,
        resource,
      };
      const service = new BindingService(ctx, catalog, deps.pool, deps.approval, deps.logger);
      log.info(
        { event: "session.catalog", binding: open.binding, tools: catalog.tools.size },
        "catalog loaded",
      );
      return createBindingTarget(service, catalog);
    },
  };
}
