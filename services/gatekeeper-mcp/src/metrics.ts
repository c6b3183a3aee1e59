/**
 * Prometheus metrics of the MCP gatekeeper: the kit's (`gatekeeperMetrics`: rpcs, latency,
 * sessions) plus the MCP requests it makes to servers.
 */
import { type GatekeeperMetrics, gatekeeperMetrics } from "@gatehouse/gatekeeper-kit";
import { Counter } from "prom-client";

/** The MCP gatekeeper's metric handles. */
export interface McpGatekeeperMetrics extends GatekeeperMetrics {
  /** MCP requests made to servers, by JSON-RPC method and outcome. */
  mcpRequests: Counter<"method" | "outcome">;
}

/** Creates the metrics (with default process metrics when `withDefaults`). */
export function createMetrics(withDefaults = true): McpGatekeeperMetrics {
  const base = gatekeeperMetrics("gatekeeper-mcp", withDefaults);
  return {
    ...base,
    mcpRequests: new Counter({
      name: "gatekeeper_mcp_mcp_requests_total",
      help: "MCP requests sent to servers, by method and outcome",
      labelNames: ["method", "outcome"],
      registers: [base.registry],
    }),
  };
}
