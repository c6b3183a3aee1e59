/** Prometheus metrics of the PostgreSQL gatekeeper: the kit's shared ones (`gatekeeperMetrics`). */
import { type GatekeeperMetrics, gatekeeperMetrics } from "@gatehouse/gatekeeper-kit";

/** The PostgreSQL gatekeeper's metric handles (rpcs, latency, sessions). */
export type PostgresGatekeeperMetrics = GatekeeperMetrics;

/** Creates the metrics (with default process metrics when `withDefaults`). */
export function createMetrics(withDefaults = true): PostgresGatekeeperMetrics {
  return gatekeeperMetrics("gatekeeper-postgres", withDefaults);
}
