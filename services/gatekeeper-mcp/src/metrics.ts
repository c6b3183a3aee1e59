/**
 * Prometheus metrics of the MCP gatekeeper (prom-client), on a registry of its own so several
 * services can run in one process (`gatehouse dev`).
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/** The gatekeeper's metric handles. */
export interface GatekeeperMetrics {
  registry: Registry;
  /** gRPC calls by method and status code name. */
  rpcs: Counter<"method" | "code">;
  rpcSeconds: Histogram<"method">;
  /** MCP requests made to servers, by JSON-RPC method and outcome. */
  mcpRequests: Counter<"method" | "outcome">;
  /** Open capnweb sessions. */
  sessions: Gauge;
}

/** Creates the metrics (with default process metrics when `withDefaults`). */
export function createMetrics(withDefaults = true): GatekeeperMetrics {
  const registry = new Registry();
  if (withDefaults) collectDefaultMetrics({ register: registry, prefix: "gatekeeper_mcp_" });
  return {
    registry,
    rpcs: new Counter({
      name: "gatekeeper_mcp_rpcs_total",
      help: "gRPC calls handled, by method and status code",
      labelNames: ["method", "code"],
      registers: [registry],
    }),
    rpcSeconds: new Histogram({
      name: "gatekeeper_mcp_rpc_seconds",
      help: "gRPC unary call latency in seconds",
      labelNames: ["method"],
      registers: [registry],
    }),
    mcpRequests: new Counter({
      name: "gatekeeper_mcp_mcp_requests_total",
      help: "MCP requests sent to servers, by method and outcome",
      labelNames: ["method", "outcome"],
      registers: [registry],
    }),
    sessions: new Gauge({
      name: "gatekeeper_mcp_sessions",
      help: "open capnweb sessions",
      registers: [registry],
    }),
  };
}
