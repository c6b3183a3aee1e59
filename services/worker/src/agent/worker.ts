/**
 * `startAgentWorker`: polls the agent task queue (AGENT_TASK_QUEUE) with the agent turn workflow
 * and its activities. Kept apart from the lifecycle worker, so a deployment without a model runs
 * none of it, and the lifecycle workflows' bundle and histories are untouched.
 */
import { fileURLToPath } from "node:url";
import { type AgentConfig, describeAgentConfig } from "@gatehouse/agent-core/providers";
import type { EventStore } from "@gatehouse/event-store";
import { ConnectionsClient, KernelClient } from "@gatehouse/proto";
import { PEER_CHANNEL_OPTIONS, type TemporalSecurity, temporalUnreachable } from "@gatehouse/service-kit";
import { credentials } from "@grpc/grpc-js";
import { bundleWorkflowCode, NativeConnection, Worker } from "@temporalio/worker";
import pino, { type Logger } from "pino";
import { AGENT_TASK_QUEUE } from "../agent-workflows/contract.ts";
import { createAgentActivities } from "./activities.ts";
import type { DeltaSink } from "./deltas.ts";

/** Absolute path of the agent workflows module the worker bundles. */
export const AGENT_WORKFLOWS_PATH = fileURLToPath(new URL("../agent-workflows/index.ts", import.meta.url));

/**
 * Bundles the agent workflows once (a few seconds; needs webpack and the sources), so a process
 * without the sources — the services image — starts from the bundle (WORKER_AGENT_WORKFLOW_BUNDLE).
 */
export async function bundleAgentWorkflows(): Promise<{ code: string }> {
  const { code } = await bundleWorkflowCode({
    workflowsPath: AGENT_WORKFLOWS_PATH,
    logger: {
      log() {},
      trace() {},
      debug() {},
      info() {},
      warn() {},
      error: (m: string) => console.error(m),
    },
  });
  return { code };
}

/** Options of `startAgentWorker`. */
export interface AgentWorkerOptions {
  store: EventStore;
  temporal: { address: string; namespace?: string } & TemporalSecurity;
  /** Kernel "host:port" (DescribeBindings, ExecuteCode, GetTurn, and Connections for request_connection). */
  kernelAddress: string;
  config: AgentConfig;
  logger?: Logger;
  /** Task queue; default AGENT_TASK_QUEUE. */
  taskQueue?: string;
  /** Where the model's text goes as it streams (a notice bus's `publishChatDelta`); none: no deltas. */
  deltas?: DeltaSink;
  /** Pre-bundled agent workflow code (`bundleAgentWorkflows`); default: bundled from source at start. */
  workflowBundle?: { code: string };
}

/** A running agent worker. */
export interface AgentWorker {
  close(): Promise<void>;
}

/**
 * Connects to Temporal and starts polling.
 * @throws TemporalUnreachable naming the address.
 */
export async function startAgentWorker(options: AgentWorkerOptions): Promise<AgentWorker> {
  const logger = (options.logger ?? pino({ level: "info" })).child({ component: "agent-worker" });
  const { address, tls, apiKey } = options.temporal;
  const connection = await NativeConnection.connect({ address, tls, apiKey }).catch(async (err: unknown) => {
    throw await temporalUnreachable(address, options.temporal, err);
  });
  const kernel = new KernelClient(options.kernelAddress, credentials.createInsecure(), PEER_CHANNEL_OPTIONS);
  // The kernel process serves Connections too: a client over the same channel.
  const connections = new ConnectionsClient(options.kernelAddress, credentials.createInsecure(), {
    channelOverride: kernel.getChannel(),
  });
  const taskQueue = options.taskQueue ?? AGENT_TASK_QUEUE;
  const worker = await Worker.create({
    connection,
    namespace: options.temporal.namespace ?? "default",
    taskQueue,
    activities: createAgentActivities({
      store: options.store,
      kernel,
      connections,
      config: options.config,
      logger,
      ...(options.deltas ? { deltas: options.deltas } : {}),
    }),
    ...(options.workflowBundle
      ? { workflowBundle: options.workflowBundle }
      : { workflowsPath: AGENT_WORKFLOWS_PATH, bundlerOptions: { ignoreModules: [] } }),
  });
  const running = worker.run().catch((err: unknown) => {
    logger.error({ event: "worker_failed", err: err instanceof Error ? err.message : "error" });
  });
  logger.info({ event: "agent_worker_started", taskQueue, config: describeAgentConfig(options.config) });
  let closed: Promise<void> | undefined;
  return {
    close() {
      closed ??= (async () => {
        if (worker.getState() === "RUNNING") worker.shutdown();
        await running;
        await connection.close();
        kernel.close();
      })();
      return closed;
    },
  };
}
