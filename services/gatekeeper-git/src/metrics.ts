/** Prometheus metrics of the git gatekeeper: the kit's shared ones (`gatekeeperMetrics`). */
import { type GatekeeperMetrics, gatekeeperMetrics } from "@gatehouse/gatekeeper-kit";

/** The git gatekeeper's metric handles (rpcs, latency, sessions). */
export type GitGatekeeperMetrics = GatekeeperMetrics;

/** Creates the metrics (with default process metrics when `withDefaults`). */
export function createMetrics(withDefaults = true): GitGatekeeperMetrics {
  return gatekeeperMetrics("gatekeeper-git", withDefaults);
}
