/**
 * @gatehouse/worker: the Temporal lifecycle worker — the action lifecycle and await-decision turn
 * workflows (src/workflows/) and their activities (src/activities/). `startLifecycleWorker` runs it
 * in-process (`gatehouse dev`, tests); `main.ts` is the split-mode process entry.
 */
import { fileURLToPath } from "node:url";
import {
  type GatekeeperApplier,
  GrpcGatekeeperApplier,
  submissionTraceparents,
  WorkspaceStreams,
} from "@gatehouse/approval-core";
import { LIFECYCLE_TASK_QUEUE } from "@gatehouse/approval-core/lifecycle-contract";
import type { EventStore } from "@gatehouse/event-store";
import { PEER_CHANNEL_OPTIONS, type TemporalSecurity, temporalUnreachable } from "@gatehouse/service-kit";
import { linkToSubmissions, serviceTracing, traceEventStoreAppends } from "@gatehouse/telemetry";
import {
  temporalClientInterceptors,
  temporalNoopWorkflowSinks,
  temporalWorkerOptions,
  temporalWorkflowInterceptorModules,
} from "@gatehouse/telemetry/temporal";
import { Client, Connection } from "@temporalio/client";
import { bundleWorkflowCode, NativeConnection, Worker } from "@temporalio/worker";
import pino, { type Logger } from "pino";
import type { Registry } from "prom-client";
import { createLifecycleActivities } from "./activities/index.ts";
import { createWorkerMetrics } from "./metrics.ts";

export type { ActivityDeps } from "./activities/index.ts";
export { createLifecycleActivities } from "./activities/index.ts";
export { outcomeOf } from "./activities/outcome.ts";
export { APPLY_MAX_LIMIT_MS, parseApplyMax } from "./apply-max.ts";
export { createWorkerMetrics, type WorkerMetrics } from "./metrics.ts";
export type * from "./workflows/activity-api.ts";

/** Absolute path of the workflows module the worker bundles (also what replay tests use). */
export const WORKFLOWS_PATH = fileURLToPath(new URL("./workflows/index.ts", import.meta.url));

/** The first line of a workflow bundle made with tracing (see `bundleLifecycleWorkflows`). */
const TRACED_BUNDLE_MARKER = "/* gatehouse workflow bundle with OpenTelemetry workflow interceptors */\n";

/**
 * Bundles the workflow code once (a few seconds), so several workers can start from the same bundle.
 * `traced`: with Temporal's OpenTelemetry workflow interceptors (workflow runs, signals and activity
 * schedules become spans, activities continue the trace), marked so a worker can tell; without, the plain
 * workflow code. The worker bundles at start as its tracing asks; the images ship both.
 */
export async function bundleLifecycleWorkflows(
  options: { traced?: boolean } = {},
): Promise<{ code: string }> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: WORKFLOWS_PATH,
    logger: quietBundlerLogger,
    ...(options.traced ? { workflowInterceptorModules: temporalWorkflowInterceptorModules() } : {}),
  });
  return { code: options.traced ? `${TRACED_BUNDLE_MARKER}${code}` : code };
}

/** True when `bundle` was made by `bundleLifecycleWorkflows({ traced: true })`. */
export function isTracedWorkflowBundle(bundle: { code: string }): boolean {
  return bundle.code.startsWith(TRACED_BUNDLE_MARKER);
}

const quietBundlerLogger = {
  log: () => {},
  trace: () => {},
  debug: () => {},
  info: () => {},
  warn: () => {},
  error: (message: string) => console.error(message),
};

/** Options of `startLifecycleWorker`. */
export interface LifecycleWorkerOptions {
  /** The event store holding the workspace streams (the source of truth). */
  store: EventStore;
  /**
   * Temporal frontend, e.g. `{ address: "127.0.0.1:7233" }`; namespace defaults to "default"; `tls`
   * and `apiKey` (service-kit's `temporalSecurity`) secure both connections; absent: plaintext.
   */
  temporal: { address: string; namespace?: string } & TemporalSecurity;
  /** Gatekeeper addresses by kind (`{ mcp: "127.0.0.1:7003" }`), or an applier to use as is. */
  gatekeepers: Record<string, string> | GatekeeperApplier;
  /**
   * With addresses: the longest wait for one apply by gatekeeper kind, in ms, while the gatekeeper
   * reports it running (GATEKEEPER_APPLY_MAX, see `parseApplyMax`); kinds not listed: 15 minutes.
   */
  applyMaxMs?: Record<string, number>;
  logger?: Logger;
  /** Task queue to poll; default LIFECYCLE_TASK_QUEUE. */
  taskQueue?: string;
  /**
   * Pre-bundled workflow code (see `bundleLifecycleWorkflows`); default: bundled at start. With tracing
   * on, give a traced bundle, or workflow spans are not made (a warning says so).
   */
  workflowBundle?: { code: string };
}

/** A running worker. */
export interface LifecycleWorker {
  /** Stops polling, waits for running activities, closes connections (and the applier it created). */
  close(): Promise<void>;
  /** Prometheus registry with the activity and workflow latency histograms. */
  metrics: Registry;
}

function isApplier(g: LifecycleWorkerOptions["gatekeepers"]): g is GatekeeperApplier {
  return typeof (g as GatekeeperApplier).apply === "function";
}

/**
 * Connects to Temporal and starts polling the lifecycle task queue.
 * @throws TemporalUnreachable (naming the address, and with TLS what the handshake found) when
 *   Temporal cannot be reached; Error when the workflow bundle fails to build.
 */
export async function startLifecycleWorker(options: LifecycleWorkerOptions): Promise<LifecycleWorker> {
  const logger = (options.logger ?? pino({ level: "info" })).child({ component: "worker" });
  const namespace = options.temporal.namespace ?? "default";
  const taskQueue = options.taskQueue ?? LIFECYCLE_TASK_QUEUE;
  // Tracing (off unless the process started it): activities continue the workflows' traces, which
  // continue the approval's; gatekeeper calls, Temporal signals and this worker's appends are spans.
  const tracing = serviceTracing("worker");
  const store = traceEventStoreAppends(tracing, options.store);
  const ownsApplier = !isApplier(options.gatekeepers);
  const applier = isApplier(options.gatekeepers)
    ? options.gatekeepers
    : new GrpcGatekeeperApplier(options.gatekeepers, {
        applyMaxMs: options.applyMaxMs ?? {},
        clientOptions: { ...PEER_CHANNEL_OPTIONS, ...tracing.grpcClientOptions() },
      });
  const metrics = createWorkerMetrics();
  tracing.countDroppedSpansOn(metrics.registry);
  const { address, tls, apiKey } = options.temporal;
  const clientConnection = await Connection.connect({ address, tls, apiKey }).catch(async (err: unknown) => {
    throw await temporalUnreachable(address, options.temporal, err);
  });
  const workerConnection = await NativeConnection.connect({ address, tls, apiKey }).catch(
    async (err: unknown) => {
      await clientConnection.close();
      throw await temporalUnreachable(address, options.temporal, err);
    },
  );
  const interceptors = await temporalClientInterceptors(tracing);
  const client = new Client({
    connection: clientConnection,
    namespace,
    ...(interceptors ? { interceptors } : {}),
  });
  const activities = createLifecycleActivities({
    store,
    streams: new WorkspaceStreams(store),
    applier,
    client,
    taskQueue,
    logger,
    metrics,
    ...(tracing.enabled
      ? {
          linkSubmissions: async (workspaceId: string, actionIds: number[]) =>
            linkToSubmissions(await submissionTraceparents(options.store, workspaceId, actionIds)),
        }
      : {}),
  });
  const workflowBundle =
    options.workflowBundle ?? (await bundleLifecycleWorkflows({ traced: tracing.enabled }));
  const tracedBundle = isTracedWorkflowBundle(workflowBundle);
  if (tracing.enabled && !tracedBundle) {
    logger.warn(
      { event: "workflow_spans_off" },
      "tracing is on but the workflow bundle has no tracing interceptors: workflows make no spans and each activity starts a trace of its own; give a bundle made with bundleLifecycleWorkflows({ traced: true }) (the images: WORKER_WORKFLOW_BUNDLE_TRACED)",
    );
  }
  const worker = await Worker.create({
    connection: workerConnection,
    namespace,
    taskQueue,
    activities,
    workflowBundle,
    ...(await temporalWorkerOptions(tracing)),
    // A traced bundle run without tracing: its spans' exporter sink must exist, and does nothing.
    ...(tracedBundle && !tracing.enabled ? { sinks: temporalNoopWorkflowSinks() } : {}),
    // A run heartbeats every second; with the default throttle (80% of the 5 s heartbeat timeout)
    // a run's completion waited for its last throttled heartbeat, up to 4 s between runs.
    maxHeartbeatThrottleInterval: "500ms",
  });
  const running = worker.run().catch((err: unknown) => {
    logger.error({ event: "worker_failed", err: err instanceof Error ? err.message : "error" });
  });
  logger.info({ event: "worker_started", taskQueue, namespace });
  let closed: Promise<void> | undefined;
  return {
    metrics: metrics.registry,
    close() {
      closed ??= (async () => {
        if (worker.getState() === "RUNNING") worker.shutdown();
        await running;
        await workerConnection.close();
        await clientConnection.close();
        if (ownsApplier) applier.close();
        logger.info({ event: "worker_stopped" });
      })();
      return closed;
    },
  };
}

export * from "./agent/chats.ts";
export * from "./agent/grpc-server.ts";
export * from "./agent/service.ts";
export * from "./agent/worker.ts";
export * from "./agent-workflows/contract.ts";
