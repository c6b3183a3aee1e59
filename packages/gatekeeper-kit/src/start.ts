/**
 * Starting a gatekeeper in-process: its logger (a child with `component: <name>`), metrics,
 * tracing (dropped spans counted on the metrics registry), the approval client, and the gRPC
 * server (`serveGatekeeper`). The gatekeeper builds only its handlers (`gatekeeperHandlers`) and
 * says what else to release on close.
 *
 * ```ts
 * const gk = await startGatekeeper({
 *   name: "gatekeeper-git", approvalAddress, host, port, logger,
 *   metrics: opts.metrics ?? gatekeeperMetrics("gatekeeper-git"),
 *   build: ({ approval, logger, metrics }) => ({ impl: createGatekeeperServer({ approval, logger, metrics, ... }) }),
 * });
 * ```
 */
import type { GatekeeperServer } from "@gatehouse/proto";
import { type ServiceTracing, serviceTracing } from "@gatehouse/telemetry";
import type { Logger } from "pino";
import { type ApprovalQueue, connectApprovalQueue } from "./approval-client.ts";
import type { GatekeeperMetrics } from "./metrics.ts";
import { type ServedGatekeeper, serveGatekeeper } from "./serve.ts";

/** What `build` gets: the shared parts the kit made. */
export interface StartParts<M extends GatekeeperMetrics> {
  /** The approval service's ApprovalQueue client (closed by the kit after `onClose`). */
  approval: ApprovalQueue;
  /** A child of the given logger with `component: <name>`. */
  logger: Logger;
  metrics: M;
  tracing: ServiceTracing;
}

/** Where a gatekeeper listens, which approval service it calls, and its logger: every gatekeeper's start options have these. */
export interface GatekeeperAddress {
  /** "host:port" of the approval service's ApprovalQueue. */
  approvalAddress: string;
  /** Interface to bind, e.g. "127.0.0.1". */
  host: string;
  /** TCP port; 0 picks a free one (returned). */
  port: number;
  logger: Logger;
}

/** Options of `startGatekeeper`. */
export interface StartGatekeeperOptions<M extends GatekeeperMetrics> extends GatekeeperAddress {
  /** The service's name, e.g. "gatekeeper-git" (log lines, spans). */
  name: string;
  /** The metrics to record into (e.g. `gatekeeperMetrics(name)`, or a superset). */
  metrics: M;
  /**
   * Builds the service implementation; `onClose` releases the gatekeeper's own resources (clients,
   * pools, child processes) after the server stopped and before the approval client closes.
   */
  build(parts: StartParts<M>): { impl: GatekeeperServer; onClose?: () => Promise<void> | void };
}

/** A running gatekeeper. */
export interface RunningGatekeeper<M extends GatekeeperMetrics = GatekeeperMetrics> extends ServedGatekeeper {
  metrics: M;
}

/** Starts a gatekeeper's gRPC server. @throws Error when the address cannot be bound. */
export async function startGatekeeper<M extends GatekeeperMetrics>(
  opts: StartGatekeeperOptions<M>,
): Promise<RunningGatekeeper<M>> {
  const logger = opts.logger.child({ component: opts.name });
  const { metrics } = opts;
  const tracing = serviceTracing(opts.name);
  tracing.countDroppedSpansOn(metrics.registry);
  const approval = connectApprovalQueue(opts.approvalAddress, { tracing });
  const { impl, onClose } = opts.build({ approval, logger, metrics, tracing });
  const served = await serveGatekeeper({
    name: opts.name,
    tracing,
    impl,
    host: opts.host,
    port: opts.port,
    logger,
    onClose: async () => {
      await onClose?.();
      approval.close();
    },
  });
  return { ...served, metrics };
}
