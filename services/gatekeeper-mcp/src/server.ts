/**
 * gRPC handlers of `gatehouse.v1.Gatekeeper`: thin — decode, call the domain, map errors to
 * status codes (the kit's toServiceError), count metrics.
 */

import type { ApprovalQueue } from "@gatehouse/gatekeeper-kit";
import { toServiceError } from "@gatehouse/gatekeeper-kit";
import type { GatekeeperServer } from "@gatehouse/proto";
import { type handleUnaryCall, status } from "@grpc/grpc-js";
import type { Logger } from "pino";
import { applyAction } from "./apply.ts";
import type { ConnectionPool } from "./connections.ts";
import { GatekeeperError } from "./errors.ts";
import type { GatekeeperMetrics } from "./metrics.ts";
import type { RegistryConfig } from "./registry.ts";
import { resolveResource } from "./resolve.ts";
import { handleOpenSession } from "./session.ts";

/** Everything the handlers use. */
export interface ServerDeps {
  registry: RegistryConfig;
  pool: ConnectionPool;
  approval: ApprovalQueue;
  logger: Logger;
  metrics: GatekeeperMetrics;
}

function unary<Req, Res>(
  method: string,
  deps: ServerDeps,
  fn: (req: Req) => Promise<Res>,
): handleUnaryCall<Req, Res> {
  return (call, callback) => {
    const stop = deps.metrics.rpcSeconds.startTimer({ method });
    fn(call.request).then(
      (res) => {
        stop();
        deps.metrics.rpcs.inc({ method, code: "OK" });
        callback(null, res);
      },
      (err: unknown) => {
        stop();
        const se = toServiceError(err);
        deps.metrics.rpcs.inc({ method, code: status[se.code ?? status.INTERNAL] ?? "UNKNOWN" });
        if (!(err instanceof GatekeeperError)) {
          // Name and frames only: the message may quote external data.
          const e = err as Error;
          const frames = (e?.stack ?? "").split("\n").slice(1, 6).join("\n");
          deps.logger.error(
            { component: "grpc", event: "rpc.internal_error", method, errName: e?.name, frames },
            "unexpected error",
          );
        }
        callback(se);
      },
    );
  };
}

/** Builds the Gatekeeper service implementation. */
export function createGatekeeperServer(deps: ServerDeps): GatekeeperServer {
  return {
    resolveResource: unary("ResolveResource", deps, (req) => resolveResource(req, deps)),
    openSession: (call) => {
      deps.metrics.rpcs.inc({ method: "OpenSession", code: "STARTED" });
      handleOpenSession(call, {
        ...deps,
        onSessionChange: (d) => deps.metrics.sessions.inc(d),
      });
    },
    applyAction: unary("ApplyAction", deps, (req) => applyAction(req, deps)),
    // MCP has no overlays (writes are AWAIT, never simulated): acknowledging is all there is to do.
    actionRejected: unary("ActionRejected", deps, async () => ({})),
  };
}
