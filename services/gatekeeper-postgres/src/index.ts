/**
 * Library entry of the PostgreSQL gatekeeper: serves gRPC `gatehouse.v1.Gatekeeper` for
 * `postgres://<registered-name>/<database>[#schema=…|#table=…]` resources. Connection details and
 * credentials come only from the administrator's registry (registry.ts); the service calls the
 * approval service's `ApprovalQueue`.
 *
 * ```ts
 * const gk = await startPostgresGatekeeper({
 *   registry: await loadRegistryFile("/etc/gatekeeper-postgres/registry.yaml"),
 *   approvalAddress: "127.0.0.1:7002", host: "127.0.0.1", port: 0, logger: pino(),
 * });
 * ```
 */
import { type GatekeeperAddress, type RunningGatekeeper, startGatekeeper } from "@gatehouse/gatekeeper-kit";
import { DEFAULT_LIMITS, type Limits } from "./limits.ts";
import { createMetrics, type PostgresGatekeeperMetrics } from "./metrics.ts";
import { Pools } from "./pools.ts";
import type { RegistryConfig } from "./registry.ts";
import { createGatekeeperServer } from "./server.ts";
import { PostgresState } from "./state.ts";
import { loadParser } from "./statement-scope.ts";

export { MARKER_DDL } from "./apply.ts";
export { generatePostgresDts } from "./dts.ts";
export * from "./errors.ts";
export { DEFAULT_LIMITS, type Limits } from "./limits.ts";
export type { PostgresGatekeeperMetrics } from "./metrics.ts";
export * from "./registry.ts";
export * from "./resource-url.ts";
export * from "./statement-scope.ts";

/** Options of `startPostgresGatekeeper`. */
export interface PostgresGatekeeperOptions extends GatekeeperAddress {
  /** The administrator's servers (registry.ts); validated. */
  registry: RegistryConfig;
  metrics?: PostgresGatekeeperMetrics;
  /** Page sizes and byte budgets (default DEFAULT_LIMITS; set `maxFrameBytes` to the runners' frame cap). */
  limits?: Partial<Limits>;
  /** Environment the registry's `passwordEnv` names are read from (default `process.env`). */
  env?: NodeJS.ProcessEnv;
  /** Test hook: runs after an apply transaction committed, before the reply (fault-injection tests). */
  afterCommit?: (actionId: number) => void;
}

/**
 * A running gatekeeper: `port`, `metrics`, `healthy()` (true until close starts) and `close()`
 * (stops the gRPC server and closes every database pool).
 */
export type PostgresGatekeeper = RunningGatekeeper<PostgresGatekeeperMetrics>;

/** Starts the gRPC server. @throws Error when the address cannot be bound. */
export async function startPostgresGatekeeper(opts: PostgresGatekeeperOptions): Promise<PostgresGatekeeper> {
  await loadParser();
  return startGatekeeper({
    name: "gatekeeper-postgres",
    approvalAddress: opts.approvalAddress,
    host: opts.host,
    port: opts.port,
    logger: opts.logger,
    metrics: opts.metrics ?? createMetrics(),
    build: ({ approval, logger, metrics }) => {
      const pools = new Pools(opts.registry, opts.env ?? process.env, logger);
      return {
        impl: createGatekeeperServer({
          registry: opts.registry,
          pools,
          limits: { ...DEFAULT_LIMITS, ...opts.limits },
          approval,
          state: new PostgresState(),
          logger,
          metrics,
          ...(opts.afterCommit ? { afterCommit: opts.afterCommit } : {}),
        }),
        onClose: () => pools.close(),
      };
    },
  });
}
