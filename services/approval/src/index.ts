/**
 * Library entry of the approval service, used in-process by `gatehouse dev` and by tests.
 * docs/architecture.md "The approval contract" and "Temporal's part"; contracts in proto/gatehouse/v1/approval.proto
 * and @gatehouse/approval-core/lifecycle-contract. The lifecycle engine is Temporal: this service is
 * a Temporal client; the lifecycle worker (@gatehouse/worker) applies actions and calls gatekeepers.
 * The one gatekeeper call this service makes itself is Gatekeeper.PrepareRevert (RequestRevert),
 * which stages a revert and touches no external system.
 */

import {
  type GatekeeperReverter,
  GrpcGatekeeperApplier,
  submissionTraceparents,
  WorkspaceStreams,
} from "@gatehouse/approval-core";
import { DEFAULT_ACTION_TTL_MS } from "@gatehouse/approval-core/lifecycle-contract";
import type { EventStore, Subscription } from "@gatehouse/event-store";
import { type NoticeBus, publishLogNotices } from "@gatehouse/live-notices";
import { ApprovalQueueService, DecisionsService } from "@gatehouse/proto";
import { type ReadModel, startReadModel } from "@gatehouse/read-model";
import {
  listenGrpc,
  PEER_CHANNEL_OPTIONS,
  probeTemporalTls,
  stopGrpc,
  type TemporalSecurity,
} from "@gatehouse/service-kit";
import { linkToSubmissions, serviceTracing, traceEventStoreAppends } from "@gatehouse/telemetry";
import { temporalClientInterceptors } from "@gatehouse/telemetry/temporal";
import { Server } from "@grpc/grpc-js";
import { Client, Connection } from "@temporalio/client";
import pino, { type Logger } from "pino";
import type { Registry } from "prom-client";
import { BindingRuns } from "./adapters/binding-runs.ts";
import { LifecycleEngineUnavailable } from "./adapters/engine-errors.ts";
import { DecisionService } from "./lifecycle/decision-service.ts";
import { createMetrics } from "./metrics.ts";
import { RevertRequests } from "./revert.ts";
import { approvalQueueHandlers, decisionsHandlers } from "./server.ts";

export * from "@gatehouse/approval-core";
export { LifecycleEngineUnavailable } from "./adapters/engine-errors.ts";
export { readModelUrlFor } from "./config.ts";
export type { ActionLifecycle, ApproveOptions } from "./lifecycle/action-lifecycle.ts";
export { DecisionService } from "./lifecycle/decision-service.ts";
export { RevertNotPrepared, RevertRequests } from "./revert.ts";

/** Where the Temporal server is, and how the connection is secured (TLS, API key; absent: plaintext). */
export interface TemporalTarget extends TemporalSecurity {
  /** "host:port" of the frontend, e.g. "127.0.0.1:7233". */
  address: string;
  /** Default "default". */
  namespace?: string;
}

/** Options of startApprovalService. */
export interface ApprovalServiceOptions {
  /** The event store holding the `workspace-<id>` streams (not closed by `close()`). */
  store: EventStore;
  /** Caller-token HMAC secret shared with the kernel (≥ 32 bytes). */
  callerTokenSecret: string;
  /** The Temporal server running the lifecycle (a worker must poll its task queue for decisions to apply). */
  temporal: TemporalTarget;
  /**
   * The gatekeepers RequestRevert asks to stage reverts (Gatekeeper.PrepareRevert): gatekeeper kind
   * -> "host:port" (as GATEKEEPER_ADDRESSES), or a client (not closed by `close()`). Default none:
   * RequestRevert then fails with UNAVAILABLE naming the missing kind.
   */
  gatekeepers?: Record<string, string> | GatekeeperReverter;
  /** Pending time-to-live of new actions before they expire, in ms (default DEFAULT_ACTION_TTL_MS, 7 days). */
  actionTtlMs?: number;
  /**
   * How long an Approve keeps waiting for outcomes while none of its actions progresses (no worker
   * claims them), in ms; the records then come back APPROVED and apply once a worker runs. Default 5000.
   */
  decisionAcceptTimeoutMs?: number;
  /** Most actions one ApplyActions run carries (APPLY_RUN_MAX; default DEFAULT_APPLY_RUN_MAX, 100). */
  applyRunMax?: number;
  /** Expiry sweep period, ms (default: a tenth of the TTL, between 100 ms and 60 s). */
  expirySweepMs?: number;
  /** Default "127.0.0.1". */
  host?: string;
  /** Default 0 (any free port). */
  port?: number;
  logger?: Logger;
  /** Skip start-up recovery (binding runs woken, legacy workflows ended) and the expiry sweep (default false). */
  skipRecovery?: boolean;
  /**
   * Where live change notices go (`gatehouse.ws.<id>.log`, one per event appended to a workspace
   * stream by any process sharing the store): NATS in split mode, an in-process bus in `gatehouse dev`.
   * Not closed by `close()`. Absent: no notices (gateways then only see changes when they re-read).
   */
  notices?: NoticeBus;
  /**
   * Where the read model's projection tables live (GetInbox, GetActionDetail, GetLogPage):
   * "sqlite:<path>" or "postgres://…" (usually the event store's own URL, readModelUrlFor), kept
   * across restarts by a stored checkpoint. Absent: in-memory SQLite, rebuilt from the streams at
   * every start.
   */
  readModelUrl?: string;
  /** Max time a read-model query waits for the projector to reach the store's head, ms (default 10 000). */
  readModelCatchUpTimeoutMs?: number;
}

/** A running approval service. */
export interface ApprovalService {
  /** The bound gRPC port. */
  port: number;
  lifecycle: DecisionService;
  /** Prometheus registry (decisions by outcome, decision→outcome latency). */
  metrics: Registry;
  /** Stops accepting calls, waits for in-flight decisions, closes the Temporal connection. */
  close(): Promise<void>;
}

/**
 * Connects to Temporal, wakes the binding runs of approved actions and starts the expiry sweep
 * (`lifecycle.recover()`), and
 * starts the ApprovalQueue and Decisions gRPC services on host:port.
 * @throws when the secret is shorter than 32 bytes, Temporal cannot be reached
 *   (LifecycleEngineUnavailable), or the port cannot be bound.
 */
export async function startApprovalService(options: ApprovalServiceOptions): Promise<ApprovalService> {
  if (Buffer.byteLength(options.callerTokenSecret) < 32) {
    throw new Error("callerTokenSecret must be at least 32 bytes (GATEHOUSE_CALLER_TOKEN_SECRET)");
  }
  const logger = (options.logger ?? pino({ level: "silent" })).child({ component: "approval" });
  const namespace = options.temporal.namespace ?? "default";
  let connection: Connection;
  try {
    const { address, tls, apiKey } = options.temporal;
    connection = await Connection.connect({ address, tls, apiKey });
  } catch {
    const tlsProblem = await probeTemporalTls(options.temporal.address, options.temporal);
    throw new LifecycleEngineUnavailable(options.temporal.address, "be reached at start-up", tlsProblem);
  }
  // Tracing (off unless the process started it): SERVER spans for ApprovalQueue and Decisions calls,
  // spans for this service's appends, CLIENT spans for its Temporal and gatekeeper calls.
  const tracing = serviceTracing("approval");
  const store = traceEventStoreAppends(tracing, options.store);
  const streams = new WorkspaceStreams(store);
  let readModel: ReadModel;
  try {
    readModel = await startReadModel({
      store: options.store,
      ...(options.readModelUrl ? { url: options.readModelUrl } : {}),
      logger,
      ...(options.readModelCatchUpTimeoutMs ? { catchUpTimeoutMs: options.readModelCatchUpTimeoutMs } : {}),
    });
  } catch (err) {
    await connection.close();
    throw err;
  }
  const metrics = createMetrics();
  tracing.countDroppedSpansOn(metrics.registry);
  const ownGatekeepers = !isReverter(options.gatekeepers);
  const gatekeepers = isReverter(options.gatekeepers)
    ? options.gatekeepers
    : new GrpcGatekeeperApplier(options.gatekeepers ?? {}, {
        clientOptions: { ...PEER_CHANNEL_OPTIONS, ...tracing.grpcClientOptions() },
      });
  const interceptors = await temporalClientInterceptors(tracing);
  const lifecycle = new DecisionService({
    streams,
    runs: new BindingRuns({
      client: new Client({ connection, namespace, ...(interceptors ? { interceptors } : {}) }),
      address: options.temporal.address,
      runMax: options.applyRunMax,
    }),
    ttlMs: options.actionTtlMs ?? DEFAULT_ACTION_TTL_MS,
    sweepEveryMs: options.expirySweepMs,
    quietMs: options.decisionAcceptTimeoutMs ?? 5000,
    logger,
    metrics: metrics.lifecycle,
  });
  const server = new Server();
  try {
    if (!options.skipRecovery) await lifecycle.recover();
    const reverts = new RevertRequests({ streams, lifecycle, gatekeepers, logger });
    const deps = {
      streams,
      readModel,
      lifecycle,
      reverts,
      callerTokenSecret: options.callerTokenSecret,
      logger,
      metrics: metrics.rpc,
      ...(tracing.enabled
        ? {
            linkSubmissions: async (workspaceId: string, actionIds: number[]) =>
              linkToSubmissions(await submissionTraceparents(options.store, workspaceId, actionIds)),
          }
        : {}),
    };
    server.addService(
      ApprovalQueueService,
      tracing.traceGrpcService(ApprovalQueueService, approvalQueueHandlers(deps)),
    );
    server.addService(DecisionsService, tracing.traceGrpcService(DecisionsService, decisionsHandlers(deps)));
  } catch (err) {
    if (ownGatekeepers) gatekeepers.close();
    await readModel.close();
    await connection.close();
    throw err;
  }
  const host = options.host ?? "127.0.0.1";
  let port: number;
  try {
    port = await listenGrpc(server, host, options.port ?? 0);
  } catch (err) {
    await lifecycle.idle();
    if (ownGatekeepers) gatekeepers.close();
    await readModel.close();
    await connection.close();
    throw err;
  }
  let publisher: Subscription | undefined;
  if (options.notices) {
    publisher = await publishLogNotices(options.store, options.notices, {
      onError: (err) =>
        logger.warn({ event: "notice_failed", err: err.message }, "a change notice was not published"),
    });
  }
  logger.info({
    event: "listening",
    host,
    port,
    temporal: options.temporal.address,
    namespace,
    notices: !!publisher,
  });
  return {
    port,
    lifecycle,
    metrics: metrics.registry,
    async close() {
      // Open WatchLog streams never end on their own: give calls a moment, then force.
      await stopGrpc(server);
      await publisher?.close();
      await lifecycle.idle();
      await lifecycle.close();
      await readModel.close();
      if (ownGatekeepers) gatekeepers.close();
      await connection.close();
      logger.info({ event: "stopped" });
    },
  };
}

function isReverter(g: ApprovalServiceOptions["gatekeepers"]): g is GatekeeperReverter {
  return typeof (g as GatekeeperReverter | undefined)?.prepareRevert === "function";
}
