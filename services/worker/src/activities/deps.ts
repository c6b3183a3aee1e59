/** What the lifecycle activities run on. */
import type { GatekeeperApplier, WorkspaceStreams } from "@gatehouse/approval-core";
import type { EventStore } from "@gatehouse/event-store";
import type { Client } from "@temporalio/client";
import type { Logger } from "pino";
import type { WorkerMetrics } from "../metrics.ts";

/** Dependencies of `createLifecycleActivities`. */
export interface ActivityDeps {
  store: EventStore;
  /** Shared read–decide–append loop over `store` (expected revision + retry on conflict). */
  streams: WorkspaceStreams;
  applier: GatekeeperApplier;
  /** Temporal client used for signal-with-start of turn workflows. */
  client: Client;
  /** Task queue turn workflows are started on. */
  taskQueue: string;
  logger: Logger;
  metrics: WorkerMetrics;
  /**
   * With tracing on: adds span links from the active span (the apply activity's) to the spans that
   * submitted `actionIds`. Never throws.
   */
  linkSubmissions?: (workspaceId: string, actionIds: number[]) => Promise<void>;
}
