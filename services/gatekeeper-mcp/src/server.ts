/**
 * The MCP gatekeeper's parts of `gatehouse.v1.Gatekeeper`; the kit's `gatekeeperHandlers` does
 * the rest (metrics, error mapping, session and apply plumbing, logging).
 */

import { type ApprovalQueue, gatekeeperHandlers } from "@gatehouse/gatekeeper-kit";
import type { GatekeeperServer } from "@gatehouse/proto";
import type { Logger } from "pino";
import { applyAction } from "./apply.ts";
import type { ConnectionPool } from "./connections.ts";
import type { McpGatekeeperMetrics } from "./metrics.ts";
import { checkObserver } from "./observers.ts";
import type { RegistryConfig } from "./registry.ts";
import { resolveResource } from "./resolve.ts";
import { prepareRevert } from "./revert.ts";
import { mcpSessionHandlers } from "./session.ts";

/** Everything the handlers use. */
export interface ServerDeps {
  registry: RegistryConfig;
  pool: ConnectionPool;
  approval: ApprovalQueue;
  logger: Logger;
  metrics: McpGatekeeperMetrics;
}

/** Builds the Gatekeeper service implementation. */
export function createGatekeeperServer(deps: ServerDeps): GatekeeperServer {
  return gatekeeperHandlers(deps, {
    resolveResource: (req) => resolveResource(req, deps),
    session: mcpSessionHandlers(deps),
    // Streams `running` while the tool call is in flight, then the outcome; a run goes one call
    // after another in order, stopping at the first failure (gatekeeper.proto).
    apply: (req, ctx) => applyAction(req, deps, ctx),
    // MCP has no overlays (writes are AWAIT, never simulated): no dropRejected, acknowledging is
    // all there is to do.
    // An MCP tool call has no generic inverse: always FAILED_PRECONDITION (revert.ts).
    prepareRevert: (req) => prepareRevert(req),
    // Strategy A, private-only (observers.ts explains why).
    checkObserver: (req) => checkObserver(req, deps),
  });
}
