/**
 * Library entry of the approval service, used in-process by `gatehouse dev` and by tests.
 * DESIGN.md "Approval semantics"; contracts in proto/gatehouse/v1/approval.proto.
 */

import { type GatekeeperApplier, GrpcGatekeeperApplier, WorkspaceStreams } from "@gatehouse/approval-core";
import type { EventStore } from "@gatehouse/event-store";
import { ApprovalQueueService, DecisionsService } from "@gatehouse/proto";
import { listenGrpc, stopGrpc } from "@gatehouse/service-kit";
import { Server } from "@grpc/grpc-js";
import pino, { type Logger } from "pino";
import type { Registry } from "prom-client";
import { InProcessLifecycle } from "./lifecycle/in-process.ts";
import { createMetrics } from "./metrics.ts";
import { approvalQueueHandlers, decisionsHandlers } from "./server.ts";

export * from "@gatehouse/approval-core";
export type { ActionLifecycle, ApproveOptions } from "./lifecycle/action-lifecycle.ts";
export { InProcessLifecycle } from "./lifecycle/in-process.ts";

/** Options of startApprovalService. */
export interface ApprovalServiceOptions {
  /** The event store holding the `workspace-<id>` streams (not closed by `close()`). */
  store: EventStore;
  /** Caller-token HMAC secret shared with the kernel (≥ 32 bytes). */
  callerTokenSecret: string;
  /** Gatekeeper kind -> "host:port" (e.g. `{ mcp: "127.0.0.1:7003" }`), or an applier (tests, in-process gatekeepers). */
  gatekeepers: Record<string, string> | GatekeeperApplier;
  /** Default "127.0.0.1". */
  host?: string;
  /** Default 0 (any free port). */
  port?: number;
  logger?: Logger;
  /** Identifies this process in apply claims; default `<hostname>/<pid>/<uuid>`. */
  instanceId?: string;
  /** Skip start-up recovery of claims left by a gone process (default false: recover). */
  skipRecovery?: boolean;
}

/** A running approval service. */
export interface ApprovalService {
  /** The bound gRPC port. */
  port: number;
  lifecycle: InProcessLifecycle;
  /** Prometheus registry (decisions by outcome, apply latency). */
  metrics: Registry;
  /** Stops accepting calls, waits for in-flight decisions, closes gatekeeper channels. */
  close(): Promise<void>;
}

function isApplier(g: ApprovalServiceOptions["gatekeepers"]): g is GatekeeperApplier {
  return typeof (g as GatekeeperApplier).apply === "function";
}

/**
 * Starts the ApprovalQueue and Decisions gRPC services on host:port, after running
 * `lifecycle.recover()` (claims left by a gone process become "outcome unknown").
 * @throws when the port cannot be bound or the secret is shorter than 32 bytes.
 */
export async function startApprovalService(options: ApprovalServiceOptions): Promise<ApprovalService> {
  if (Buffer.byteLength(options.callerTokenSecret) < 32) {
    throw new Error("callerTokenSecret must be at least 32 bytes (GATEHOUSE_CALLER_TOKEN_SECRET)");
  }
  const logger = (options.logger ?? pino({ level: "silent" })).child({ component: "approval" });
  const applier = isApplier(options.gatekeepers)
    ? options.gatekeepers
    : new GrpcGatekeeperApplier(options.gatekeepers);
  const streams = new WorkspaceStreams(options.store);
  const metrics = createMetrics();
  const lifecycle = new InProcessLifecycle({
    streams,
    applier,
    logger,
    metrics: metrics.lifecycle,
    ...(options.instanceId ? { instanceId: options.instanceId } : {}),
  });
  if (!options.skipRecovery) await lifecycle.recover();

  const server = new Server();
  const deps = { streams, lifecycle, callerTokenSecret: options.callerTokenSecret, logger };
  server.addService(ApprovalQueueService, approvalQueueHandlers(deps));
  server.addService(DecisionsService, decisionsHandlers(deps));
  const host = options.host ?? "127.0.0.1";
  const port = await listenGrpc(server, host, options.port ?? 0);
  logger.info({ event: "listening", host, port, instanceId: lifecycle.instanceId });
  return {
    port,
    lifecycle,
    metrics: metrics.registry,
    async close() {
      // Open WatchLog streams never end on their own: give calls a moment, then force.
      await stopGrpc(server);
      await lifecycle.idle();
      if (!isApplier(options.gatekeepers)) applier.close();
      logger.info({ event: "stopped" });
    },
  };
}
