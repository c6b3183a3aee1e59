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

import { type ApprovalQueue, connectApprovalQueue, serveGatekeeper } from "@gatehouse/gatekeeper-kit";
import { serviceTracing } from "@gatehouse/telemetry";
import type { Logger } from "pino";
import { ConnectionPool, type PoolTimeouts } from "./connections.ts";
import { createMetrics, type GatekeeperMetrics } from "./metrics.ts";
import type { RegistryConfig } from "./registry.ts";
import { createGatekeeperServer } from "./server.ts";

export { FrameTransport, type FrameTransportOptions } from "@gatehouse/gatekeeper-kit";
export type { ActionResultView, PendingAction, StagedPayload } from "./binding-service.ts";
export { classifyTool, type ToolClassification } from "./classify.ts";
export { describeToolCall } from "./describe.ts";
export { generateBindingDts } from "./dts.ts";
export * from "./errors.ts";
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
export interface McpGatekeeperOptions {
  registry: RegistryConfig;
  /** "host:port" of the approval service's ApprovalQueue. */
  approvalAddress: string;
  /** Interface to bind, e.g. "127.0.0.1". */
  host: string;
  /** TCP port; 0 picks a free one (returned). */
  port: number;
  logger: Logger;
  /** Metrics to register into (default: a fresh registry with process metrics). */
  metrics?: GatekeeperMetrics;
  timeouts?: Partial<PoolTimeouts>;
}

/** A running gatekeeper. */
export interface McpGatekeeper {
  port: number;
  metrics: GatekeeperMetrics;
  /** True until close() starts. */
  healthy(): boolean;
  /** Stops accepting calls, ends open sessions, closes every MCP client (stdio children exit). */
  close(): Promise<void>;
}

/** Starts the gRPC server. @throws Error when the address cannot be bound. */
export async function startMcpGatekeeper(opts: McpGatekeeperOptions): Promise<McpGatekeeper> {
  const logger = opts.logger.child({ component: "gatekeeper-mcp" });
  const metrics = opts.metrics ?? createMetrics();
  const pool = new ConnectionPool({
    logger,
    ...(opts.timeouts ? { timeouts: opts.timeouts } : {}),
    observe: (method, outcome) => metrics.mcpRequests.inc({ method, outcome }),
  });
  const tracing = serviceTracing("gatekeeper-mcp");
  tracing.countDroppedSpansOn(metrics.registry);
  const approval: ApprovalQueue = connectApprovalQueue(opts.approvalAddress, { tracing });
  const served = await serveGatekeeper({
    name: "gatekeeper-mcp",
    tracing,
    impl: createGatekeeperServer({ registry: opts.registry, pool, approval, logger, metrics }),
    host: opts.host,
    port: opts.port,
    logger,
    onClose: async () => {
      await pool.closeAll();
      approval.close();
    },
  });
  return { ...served, metrics };
}
