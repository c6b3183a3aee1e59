/**
 * Library entry of the MCP gatekeeper: serves gRPC `gatehouse.v1.Gatekeeper` (gatekeeper.proto)
 * as a client of real MCP servers, calling the approval service's `ApprovalQueue`.
 *
 * ```ts
 * const gk = await startMcpGatekeeper({
 *   registry: createRegistry({ servers: { memory: { command: "node", args: [...], vetted: true } } }),
 *   approvalAddress: "127.0.0.1:7002", host: "127.0.0.1", port: 0, logger: pino(),
 * });
 * // gk.port is the bound port; await gk.close() ends sessions, MCP clients and stdio children.
 * ```
 */

import { type GatekeeperAddress, type RunningGatekeeper, startGatekeeper } from "@gatehouse/gatekeeper-kit";
import { ConnectionPool, type PoolTimeouts } from "./connections.ts";
import { createMetrics, type McpGatekeeperMetrics } from "./metrics.ts";
import type { RegistryConfig } from "./registry.ts";
import { createGatekeeperServer } from "./server.ts";

export { FrameTransport, type FrameTransportOptions } from "@gatehouse/gatekeeper-kit";
export type { ActionResultView, PendingAction, StagedPayload } from "./binding-service.ts";
export { classifyTool, type ToolClassification } from "./classify.ts";
export { describeToolCall } from "./describe.ts";
export { generateBindingDts } from "./dts.ts";
export * from "./errors.ts";
export type { McpGatekeeperMetrics } from "./metrics.ts";
export {
  createRegistry,
  loadRegistryFile,
  RegistryConfig,
  type RegistryInput,
  RegistryInvalid,
} from "./registry.ts";
export { type ResolvedResource, resolveResourceUrl, type Trust } from "./resource-url.ts";
export { formatScopeFragment, parseScopeFragment, type Scope } from "./scope-fragment.ts";

/** Options of `startMcpGatekeeper`. */
export interface McpGatekeeperOptions extends GatekeeperAddress {
  registry: RegistryConfig;
  /** Metrics to register into (default: a fresh registry with process metrics). */
  metrics?: McpGatekeeperMetrics;
  timeouts?: Partial<PoolTimeouts>;
}

/**
 * A running gatekeeper: `port`, `metrics`, `healthy()` (true until close starts) and `close()`
 * (stops accepting calls, ends open sessions, closes every MCP client: stdio children exit).
 */
export type McpGatekeeper = RunningGatekeeper<McpGatekeeperMetrics>;

/** Starts the gRPC server. @throws Error when the address cannot be bound. */
export async function startMcpGatekeeper(opts: McpGatekeeperOptions): Promise<McpGatekeeper> {
  return startGatekeeper({
    name: "gatekeeper-mcp",
    approvalAddress: opts.approvalAddress,
    host: opts.host,
    port: opts.port,
    logger: opts.logger,
    metrics: opts.metrics ?? createMetrics(),
    build: ({ approval, logger, metrics }) => {
      const pool = new ConnectionPool({
        logger,
        ...(opts.timeouts ? { timeouts: opts.timeouts } : {}),
        observe: (method, outcome) => metrics.mcpRequests.inc({ method, outcome }),
      });
      return {
        impl: createGatekeeperServer({ registry: opts.registry, pool, approval, logger, metrics }),
        onClose: () => pool.closeAll(),
      };
    },
  });
}
