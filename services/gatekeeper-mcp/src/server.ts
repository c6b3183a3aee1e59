/**
 * gRPC handlers of `gatehouse.v1.Gatekeeper`: thin — decode, call the domain. The kit's
 * `unaryHandler` maps errors to status codes (toServiceError), counts metrics and logs
 * unexpected errors without their message.
 */

import {
  type ApprovalQueue,
  applyRunHandler,
  applyStreamHandler,
  unaryHandler,
} from "@gatehouse/gatekeeper-kit";
import type { GatekeeperServer } from "@gatehouse/proto";
import type { Logger } from "pino";
import { applyAction } from "./apply.ts";
import type { ConnectionPool } from "./connections.ts";
import type { GatekeeperMetrics } from "./metrics.ts";
import { checkObserver } from "./observers.ts";
import type { RegistryConfig } from "./registry.ts";
import { resolveResource } from "./resolve.ts";
import { prepareRevert } from "./revert.ts";
import { handleOpenSession } from "./session.ts";

/** Everything the handlers use. */
export interface ServerDeps {
  registry: RegistryConfig;
  pool: ConnectionPool;
  approval: ApprovalQueue;
  logger: Logger;
  metrics: GatekeeperMetrics;
}

/** Builds the Gatekeeper service implementation. */
export function createGatekeeperServer(deps: ServerDeps): GatekeeperServer {
  return {
    resolveResource: unaryHandler("ResolveResource", deps, (req) => resolveResource(req, deps)),
    openSession: (call) => {
      deps.metrics.rpcs.inc({ method: "OpenSession", code: "STARTED" });
      handleOpenSession(call, {
        ...deps,
        onSessionChange: (d) => deps.metrics.sessions.inc(d),
      });
    },
    // Streams `running` while the tool call is in flight, then the outcome (gatekeeper.proto).
    applyAction: applyStreamHandler(deps, (req, ctx) => applyAction(req, deps, ctx)),
    // A run of tool calls, one after another in order, stopping at the first failure (gatekeeper.proto).
    applyActions: applyRunHandler(deps, (req, ctx) => applyAction(req, deps, ctx)),
    // MCP has no overlays (writes are AWAIT, never simulated): acknowledging is all there is to do.
    actionRejected: unaryHandler("ActionRejected", deps, async () => ({})),
    // An MCP tool call has no generic inverse: always FAILED_PRECONDITION (revert.ts).
    prepareRevert: unaryHandler("PrepareRevert", deps, (req) => prepareRevert(req)),
    // Strategy A, private-only (observers.ts explains why).
    checkObserver: unaryHandler("CheckObserver", deps, (req) => checkObserver(req, deps)),
  };
}
