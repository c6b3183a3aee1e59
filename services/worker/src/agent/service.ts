/**
 * The built-in agent as one piece for a process that hosts it (`gatehouse dev`, tests): with a model
 * configured, the agent worker polling its task queue plus the chat operations (start, send,
 * cancel, read); with none, chat operations that throw AgentOff naming the variables to set.
 */
import type { AgentConfig } from "@gatehouse/agent-core/providers";
import type { EventStore } from "@gatehouse/event-store";
import { type TemporalSecurity, temporalUnreachable } from "@gatehouse/service-kit";
import { Client, Connection } from "@temporalio/client";
import type { Logger } from "pino";
import { type AgentChats, agentChats, agentEnabled } from "./chats.ts";
import type { DeltaSink } from "./deltas.ts";
import { type AgentWorker, startAgentWorker } from "./worker.ts";

/** Options of `startAgent`. */
export interface AgentOptions {
  store: EventStore;
  temporal: { address: string; namespace?: string } & TemporalSecurity;
  /** Kernel "host:port". */
  kernelAddress: string;
  /** The agent configuration (`agentConfigFromEnv`); undefined or naming no model: off. */
  config: AgentConfig | undefined;
  /** Task queue; default AGENT_TASK_QUEUE. */
  taskQueue?: string;
  /** Pre-bundled agent workflow code (`bundleAgentWorkflows`); default: bundled from source at start. */
  workflowBundle?: { code: string };
  /** false: only the chat operations (another process runs the agent worker). Default true. */
  runWorker?: boolean;
  logger?: Logger;
  /** Where the model's text goes as it streams (a notice bus's `publishChatDelta`); none: no deltas. */
  deltas?: DeltaSink;
}

/** The agent in this process. */
export interface Agent {
  chats: AgentChats;
  close(): Promise<void>;
}

/**
 * Starts the agent (or its off state).
 * @throws TemporalUnreachable naming the address (only when on).
 */
export async function startAgent(options: AgentOptions): Promise<Agent> {
  const { store, config } = options;
  if (!agentEnabled(config)) {
    return { chats: agentChats({ store, client: undefined, config: undefined }), close: async () => {} };
  }
  const { address, tls, apiKey } = options.temporal;
  const connection = await Connection.connect({ address, tls, apiKey }).catch(async (err: unknown) => {
    throw await temporalUnreachable(address, options.temporal, err);
  });
  let worker: AgentWorker | undefined;
  try {
    if (options.runWorker !== false)
      worker = await startAgentWorker({
        store,
        temporal: options.temporal,
        kernelAddress: options.kernelAddress,
        config,
        ...(options.logger ? { logger: options.logger } : {}),
        ...(options.taskQueue ? { taskQueue: options.taskQueue } : {}),
        ...(options.deltas ? { deltas: options.deltas } : {}),
        ...(options.workflowBundle ? { workflowBundle: options.workflowBundle } : {}),
      });
  } catch (err) {
    await connection.close();
    throw err;
  }
  const client = new Client({ connection, namespace: options.temporal.namespace ?? "default" });
  return {
    chats: agentChats({
      store,
      client,
      config,
      ...(options.taskQueue ? { taskQueue: options.taskQueue } : {}),
    }),
    async close() {
      await worker?.close();
      await connection.close();
    },
  };
}
