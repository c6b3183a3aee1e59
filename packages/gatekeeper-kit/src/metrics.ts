/**
 * The Prometheus metrics every gatekeeper reports (prom-client), on a registry of its own so
 * several services can run in one process (`gatehouse dev`). A gatekeeper with metrics of its own
 * (e.g. the MCP gatekeeper's requests to servers) adds them to `registry`.
 */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

/** The metric handles the kit's handlers record into (see `gatekeeperHandlers`). */
export interface GatekeeperMetrics {
  registry: Registry;
  /** gRPC calls by method and status code name ("OK", "NOT_FOUND", ..., "STARTED" for sessions). */
  rpcs: Counter<"method" | "code">;
  /** gRPC call latency in seconds, by method. */
  rpcSeconds: Histogram<"method">;
  /** Open capnweb sessions. */
  sessions: Gauge;
}

/**
 * The metric name prefix of a service: "gatekeeper-git" → "gatekeeper_git".
 * @param service the service's name, lower case with dashes.
 */
export function metricPrefix(service: string): string {
  return service.replace(/[^a-zA-Z0-9]/g, "_");
}

/**
 * Creates the shared metrics of one gatekeeper: `<prefix>_rpcs_total`, `<prefix>_rpc_seconds`,
 * `<prefix>_sessions`, and (when `withDefaults`) the process metrics prefixed `<prefix>_`.
 * @param service e.g. "gatekeeper-git" (prefix "gatekeeper_git").
 */
export function gatekeeperMetrics(service: string, withDefaults = true): GatekeeperMetrics {
  const prefix = metricPrefix(service);
  const registry = new Registry();
  if (withDefaults) collectDefaultMetrics({ register: registry, prefix: `${prefix}_` });
  return {
    registry,
    rpcs: new Counter({
      name: `${prefix}_rpcs_total`,
      help: "gRPC calls handled, by method and status code",
      labelNames: ["method", "code"],
      registers: [registry],
    }),
    rpcSeconds: new Histogram({
      name: `${prefix}_rpc_seconds`,
      help: "gRPC unary call latency in seconds",
      labelNames: ["method"],
      registers: [registry],
    }),
    sessions: new Gauge({
      name: `${prefix}_sessions`,
      help: "open capnweb sessions",
      registers: [registry],
    }),
  };
}
