/**
 * Library entry of the kernel, used by `gatehouse dev` to run it in-process and by `main.ts`.
 */

import { WorkspaceStreams } from "@gatehouse/approval-core";
import type { EventStore } from "@gatehouse/event-store";
import type { NotifyConfig } from "@gatehouse/notify";
import { ConnectionsService, KernelService, SandboxRunnerClient } from "@gatehouse/proto";
import { Leadership } from "@gatehouse/read-model";
import {
  listenGrpc,
  PEER_CHANNEL_OPTIONS,
  stopGrpc,
  type TemporalSecurity,
  temporalUnreachable,
} from "@gatehouse/service-kit";
import { serviceTracing, traceEventStoreAppends } from "@gatehouse/telemetry";
import { temporalClientInterceptors } from "@gatehouse/telemetry/temporal";
import { credentials, Server } from "@grpc/grpc-js";
import { Client, Connection } from "@temporalio/client";
import pino, { type Logger } from "pino";
import { connectionsHandlers } from "./connections-server.ts";
import { type GatekeeperAddresses, GatekeeperClients, type UnconfiguredHints } from "./gatekeepers.ts";
import { createKernelMetrics, type KernelMetrics } from "./metrics.ts";
import { ReviewNotifier } from "./review-notifier.ts";
import { kernelHandlers } from "./server.ts";
import { Workspaces } from "./workspaces.ts";

export {
  ConnectionRequestConflict,
  ConnectionRequestNotFound,
  decideConnectionRequest,
  listConnectionRequests,
  requestConnection,
} from "./connections.ts";
export * from "./domain/errors.ts";
export { checkPerson, MEMBER_ID, reaches, workspaceOf } from "./domain/membership.ts";
export * from "./domain/workspace.ts";
export { DEFAULT_LIMITS, executeCode, MAX_CODE_BYTES, MAX_LIMITS } from "./execution.ts";
export { GatekeeperClients, gatekeeperKindFor, type UnconfiguredHints } from "./gatekeepers.ts";
export { addMember, removeMember } from "./members.ts";
export { personStream, preferencesOf } from "./notification-preferences.ts";
export { addObserver, type ObserverDeps, redactCredential } from "./observers.ts";
export { REVIEW_NOTIFICATIONS_STREAM, ReviewNotifier } from "./review-notifier.ts";
export { type RevocationDeps, removeBinding } from "./revocation.ts";
export { type NewWorkspace, type WorkspaceSummary, Workspaces } from "./workspaces.ts";

export interface KernelOptions {
  store: EventStore;
  callerTokenSecret: string;
  /** Gatekeeper kind → "host:port", e.g. {mcp: "127.0.0.1:7003"}. */
  gatekeepers: GatekeeperAddresses;
  /**
   * Per gatekeeper kind, how a person configures it, for the refusal of a resource whose kind has no
   * address in `gatekeepers` (default: "set GATEKEEPER_ADDRESSES to include <kind>=host:port").
   */
  unconfiguredHints?: UnconfiguredHints;
  /** Sandbox runner "host:port". */
  sandboxRunnerAddress: string;
  host?: string;
  /** 0 picks a free port. */
  port?: number;
  logger?: Logger;
  metrics?: KernelMetrics;
  /**
   * Temporal server for await-decision turns ("host:port"), with `tls`/`apiKey` from service-kit's
   * `temporalSecurity` (absent: plaintext); without it executions never suspend.
   */
  temporal?: { address: string; namespace?: string } & TemporalSecurity;
  /**
   * Notification settings (@gatehouse/notify `loadNotifyConfig`). Given: the kernel tells people when a
   * turn's writes wait for review (review-notifier.ts) and keeps their preferences; absent: it sends
   * nothing, and preferences can still be set (kept for when it is configured).
   */
  notify?: NotifyConfig;
  /**
   * The event store's PostgreSQL URL when several kernel replicas share it: then only the replica holding
   * an advisory lock on that database runs the review notifier (the others take over when it goes), so
   * each turn is notified once. Absent: this kernel runs the notifier (one replica).
   */
  notifyLeaderUrl?: string;
}

/** The PostgreSQL advisory lock key of the review notifier (one holder per installation). */
export const REVIEW_NOTIFIER_LOCK_KEY = 7_420_117_032;

export interface RunningKernel {
  port: number;
  metrics: KernelMetrics;
  close(): Promise<void>;
}

/** @throws TemporalUnreachable naming the address and, with TLS, what the handshake found. */
async function connectTemporal(target: { address: string } & TemporalSecurity): Promise<Connection> {
  const { address, tls, apiKey } = target;
  try {
    return await Connection.connect({ address, tls, apiKey });
  } catch (err) {
    throw await temporalUnreachable(address, target, err);
  }
}

/** Starts the Kernel gRPC server. Resolves once it listens. */
export async function startKernel(options: KernelOptions): Promise<RunningKernel> {
  const logger = (options.logger ?? pino()).child({ component: "kernel" });
  // Tracing (off unless the process started it): SERVER spans for Kernel and Connections calls, CLIENT
  // spans for the runner, gatekeeper and Temporal calls, spans for the kernel's own appends.
  const tracing = serviceTracing("kernel");
  const store = traceEventStoreAppends(tracing, options.store);
  const gatekeepers = new GatekeeperClients(options.gatekeepers, options.unconfiguredHints, {
    ...PEER_CHANNEL_OPTIONS,
    ...tracing.grpcClientOptions(),
  });
  const runner = new SandboxRunnerClient(options.sandboxRunnerAddress, credentials.createInsecure(), {
    ...PEER_CHANNEL_OPTIONS,
    ...tracing.grpcClientOptions(),
  });
  const workspaces = new Workspaces(store, gatekeepers);
  const metrics = options.metrics ?? createKernelMetrics();
  tracing.countDroppedSpansOn(metrics.registry);
  const connection = options.temporal ? await connectTemporal(options.temporal) : undefined;
  const interceptors = await temporalClientInterceptors(tracing);
  const temporal = connection
    ? new Client({
        connection,
        namespace: options.temporal?.namespace ?? "default",
        ...(interceptors ? { interceptors } : {}),
      })
    : undefined;
  const streams = new WorkspaceStreams(store);
  let stopNotifier: (() => Promise<void>) | undefined;
  if (options.notify) {
    const notify = options.notify;
    const start = () => ReviewNotifier.start({ store, streams, workspaces, config: notify, logger, metrics });
    if (options.notifyLeaderUrl) {
      const leadership = new Leadership({
        url: options.notifyLeaderUrl,
        logger,
        lockKey: REVIEW_NOTIFIER_LOCK_KEY,
        job: "the review notifier",
        lead: () => {
          const running = start();
          running.catch((err: Error) =>
            logger.error(
              { event: "review_notifier_failed", err: err.message },
              "the review notifier did not start",
            ),
          );
          return async () => (await running.catch(() => undefined))?.close();
        },
      });
      stopNotifier = () => leadership.close();
    } else {
      const notifier = await start();
      stopNotifier = () => notifier.close();
    }
  }
  const server = new Server();
  server.addService(
    KernelService,
    tracing.traceGrpcService(
      KernelService,
      kernelHandlers({
        store,
        streams,
        workspaces,
        gatekeepers,
        runner,
        callerTokenSecret: options.callerTokenSecret,
        logger,
        metrics,
        temporal,
        notify: options.notify,
      }),
    ),
  );
  server.addService(
    ConnectionsService,
    tracing.traceGrpcService(ConnectionsService, connectionsHandlers({ workspaces, store })),
  );
  const host = options.host ?? "127.0.0.1";
  const port = await listenGrpc(server, host, options.port ?? 0);
  logger.info({ event: "listening", port }, "kernel listening");
  return {
    port,
    metrics,
    async close() {
      await stopGrpc(server);
      await stopNotifier?.();
      gatekeepers.close();
      runner.close();
      await connection?.close();
    },
  };
}
