/**
 * The MCP gatekeeper's parts of `gatehouse.v1.Gatekeeper`; the kit's `gatekeeperHandlers` does
 * the rest (metrics, error mapping, session and apply plumbing, logging).
 */

import { type ApprovalQueue, gatekeeperHandlers } from "@gatehouse/gatekeeper-kit";
import type { ApplyActionResponse, GatekeeperServer } from "@gatehouse/proto";
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

/**
 * Builds the Gatekeeper service implementation. Applies are at most once per action id in this
 * process: a second ApplyAction of the same id (a caller that lost the first answer and asked
 * again) gets the first one's outcome, and the tool is not called again.
 */
export function createGatekeeperServer(deps: ServerDeps): GatekeeperServer {
  const applies = new Map<string, Promise<ApplyActionResponse>>();
  return gatekeeperHandlers(deps, {
    resolveResource: (req) => resolveResource(req, deps),
    session: mcpSessionHandlers(deps),
    // Streams `running` while the tool call is in flight, then the outcome; a run goes one call
    // after another in order, stopping at the first failure (gatekeeper.proto).
    apply: (req, ctx) => {
      const key = JSON.stringify([req.workspaceId, req.binding, req.actionId]);
      let run = applies.get(key);
      if (!run) {
        run = applyAction(req, deps, ctx);
        applies.set(key, run);
      }
      return run;
    },
    // MCP has no overlays (writes are AWAIT, never simulated): no dropRejected, acknowledging is
    // all there is to do.
    // An MCP tool call has no generic inverse: always FAILED_PRECONDITION (revert.ts).
    prepareRevert: (req) => prepareRevert(req),
    // Strategy A, private-only (observers.ts explains why).
    checkObserver: (req) => checkObserver(req, deps),
  });
}
