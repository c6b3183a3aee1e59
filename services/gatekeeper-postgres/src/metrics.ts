/** Prometheus metrics of the PostgreSQL gatekeeper, on a registry of its own. */
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from "prom-client";

export interface PostgresGatekeeperMetrics {
  registry: Registry;
  rpcs: Counter<"method" | "code">;
  rpcSeconds: Histogram<"method">;
  sessions: Gauge;
}

export function createMetrics(withDefaults = true): PostgresGatekeeperMetrics {
  const registry = new Registry();
  if (withDefaults) collectDefaultMetrics({ register: registry, prefix: "gatekeeper_postgres_" });
  return {
    registry,
    rpcs: new Counter({
      name: "gatekeeper_postgres_rpcs_total",
      help: "gRPC calls handled, by method and status code",
      labelNames: ["method", "code"],
      registers: [registry],
    }),
    rpcSeconds: new Histogram({
      name: "gatekeeper_postgres_rpc_seconds",
      help: "gRPC unary call latency in seconds",
      labelNames: ["method"],
      registers: [registry],
    }),
    sessions: new Gauge({
      name: "gatekeeper_postgres_sessions",
      help: "open capnweb sessions",
      registers: [registry],
    }),
  };
}
