/** Prometheus metrics of the gateway. */
import { Counter, Gauge, Histogram, Registry } from "prom-client";

/** The gateway's metrics and their registry. */
export interface GatewayMetrics {
  registry: Registry;
  /** HTTP requests by route, method and status; seconds. */
  requestSeconds: Histogram<"route" | "method" | "status">;
  /** Decisions made through the gateway, by kind (approve, approve_batch, reject, rule, remove_binding) and outcome (ok, refused, error). */
  decisions: Counter<"kind" | "outcome">;
  /** Connected server-sent-event clients. */
  sseClients: Gauge;
  /** Notices received from the bus. */
  notices: Counter;
  /** Resyncs sent because notices may have been missed. */
  resyncs: Counter;
  /**
   * Seconds from a notice's publication (its publishedAtMs, the approval service's clock) to its write
   * on the event streams of the browsers that reach its workspace; once per notice forwarded to any.
   */
  noticeDeliverySeconds: Histogram;
  /** Open MCP sessions at `/mcp`. */
  mcpSessions: Gauge;
  /** MCP session lifecycle by event: opened, closed (by the client), expired (idle), refused_limit, refused_auth, refused_origin. */
  mcpSessionEvents: Counter<"event">;
  /** MCP tool calls by tool (its name; "other" past 32 distinct names) and outcome: ok, tool_error, protocol_error, abandoned (session closed first). */
  mcpToolCalls: Counter<"tool" | "outcome">;
  /** MCP tool call duration by tool, seconds (request in → response out at the gateway). */
  mcpToolCallSeconds: Histogram<"tool">;
}

/** Creates the metrics in a fresh registry. */
export function createMetrics(): GatewayMetrics {
  const registry = new Registry();
  return {
    registry,
    requestSeconds: new Histogram({
      name: "gatehouse_gateway_request_seconds",
      help: "HTTP API request duration in seconds",
      labelNames: ["route", "method", "status"],
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    }),
    decisions: new Counter({
      name: "gatehouse_gateway_decisions_total",
      help: "Decisions made through the gateway",
      labelNames: ["kind", "outcome"],
      registers: [registry],
    }),
    sseClients: new Gauge({
      name: "gatehouse_gateway_sse_clients",
      help: "Connected server-sent-event clients",
      registers: [registry],
    }),
    notices: new Counter({
      name: "gatehouse_gateway_notices_total",
      help: "Log change notices received from the bus",
      registers: [registry],
    }),
    resyncs: new Counter({
      name: "gatehouse_gateway_resyncs_total",
      help: "Resyncs sent to clients because notices may have been missed",
      registers: [registry],
    }),
    noticeDeliverySeconds: new Histogram({
      name: "gatehouse_gateway_notice_delivery_seconds",
      help: "Seconds from a live notice's publication to its write on the browsers' event streams",
      buckets: [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10],
      registers: [registry],
    }),
    mcpSessions: new Gauge({
      name: "gatehouse_gateway_mcp_sessions",
      help: "Open MCP sessions at /mcp",
      registers: [registry],
    }),
    mcpSessionEvents: new Counter({
      name: "gatehouse_gateway_mcp_session_events_total",
      help: "MCP session lifecycle events (opened, closed, expired, refused_limit, refused_auth, refused_origin)",
      labelNames: ["event"],
      registers: [registry],
    }),
    mcpToolCalls: new Counter({
      name: "gatehouse_gateway_mcp_tool_calls_total",
      help: "MCP tool calls by tool and outcome (ok, tool_error, protocol_error, abandoned)",
      labelNames: ["tool", "outcome"],
      registers: [registry],
    }),
    mcpToolCallSeconds: new Histogram({
      name: "gatehouse_gateway_mcp_tool_call_seconds",
      help: "MCP tool call duration at the gateway in seconds",
      labelNames: ["tool"],
      buckets: [0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 300],
      registers: [registry],
    }),
  };
}
