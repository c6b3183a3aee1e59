/**
 * The process skeleton every gatekeeper shares: register a `gatehouse.v1.Gatekeeper`
 * implementation on a gRPC server, listen, report health, and close in order (stop accepting
 * calls and let open ones finish, then the gatekeeper's own resources, then log).
 *
 * ```ts
 * const served = await serveGatekeeper({ name: "gatekeeper-git", impl, host, port, logger,
 *   onClose: () => approval.close() });
 * ```
 */
import { type GatekeeperServer, GatekeeperService } from "@gatehouse/proto";
import { listenGrpc, stopGrpc } from "@gatehouse/service-kit";
import { type ServiceTracing, serviceTracing } from "@gatehouse/telemetry";
import { Server } from "@grpc/grpc-js";
import type { KitLogger } from "./logger.ts";
import { withSessionTracing } from "./session-tracing.ts";

/** Options of `serveGatekeeper`. */
export interface ServeGatekeeperOptions {
  /** Service name used in log lines, e.g. "gatekeeper-git". */
  name: string;
  impl: GatekeeperServer;
  /** Interface to bind, e.g. "127.0.0.1". */
  host: string;
  /** TCP port; 0 picks a free one (returned). */
  port: number;
  logger: KitLogger;
  /** Releases the gatekeeper's own resources after the server stopped (clients, child processes). */
  onClose?: () => Promise<void> | void;
  /**
   * The gatekeeper's tracing (default `serviceTracing(name)`): each Gatekeeper call is a SERVER span
   * continuing the caller's trace, and each binding method call of a session a span of its own.
   */
  tracing?: ServiceTracing;
}

/** A served gatekeeper. */
export interface ServedGatekeeper {
  port: number;
  /** True until close() starts. */
  healthy(): boolean;
  /** Idempotent. */
  close(): Promise<void>;
}

/** Starts serving. @throws Error when the address cannot be bound. */
export async function serveGatekeeper(opts: ServeGatekeeperOptions): Promise<ServedGatekeeper> {
  const server = new Server();
  const tracing = opts.tracing ?? serviceTracing(opts.name);
  server.addService(
    GatekeeperService,
    tracing.traceGrpcService(GatekeeperService, withSessionTracing(opts.impl, tracing)),
  );
  const port = await listenGrpc(server, opts.host, opts.port);
  opts.logger.info({ event: "started", port }, `${opts.name} listening`);
  let closing: Promise<void> | null = null;
  return {
    port,
    healthy: () => closing === null,
    close() {
      closing ??= (async () => {
        await stopGrpc(server);
        await opts.onClose?.();
        opts.logger.info({ event: "stopped" }, `${opts.name} stopped`);
      })();
      return closing;
    },
  };
}
