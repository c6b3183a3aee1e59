/** Process configuration of the worker from environment variables, validated with zod (names the wrong variable). */

import { type AgentConfig, agentConfigFromEnv } from "@gatehouse/agent-core/providers";
import { parseGatekeeperAddresses } from "@gatehouse/approval-core";
import { checkStoreEnv, EVENT_STORE_URL_ENV, storeUrlFromEnv } from "@gatehouse/event-store";
import {
  checkNatsTlsEnv,
  checkTemporalTlsEnv,
  hostPort,
  NATS_TLS_ENV,
  type NatsTlsOptions,
  natsTls,
  natsUrlField,
  parseEnv,
  splitHostPort,
  TEMPORAL_TLS_ENV,
  type TemporalSecurity,
  temporalSecurity,
} from "@gatehouse/service-kit";
import { z } from "zod";
import { agentEnabled } from "./agent/chats.ts";
import { parseApplyMax } from "./apply-max.ts";

const address = hostPort("127.0.0.1:7233");

const EnvSchema = z
  .object({
    TEMPORAL_ADDRESS: address,
    TEMPORAL_NAMESPACE: z.string().min(1).default("default"),
    ...TEMPORAL_TLS_ENV,
    GATEHOUSE_DATA_DIR: z.string().min(1, "set the directory holding events.sqlite").optional(),
    EVENT_STORE_URL: EVENT_STORE_URL_ENV,
    GATEKEEPER_ADDRESSES: z.string().default(""),
    GATEKEEPER_APPLY_MAX: z
      .string()
      .default("")
      .transform((text, ctx) => {
        try {
          return parseApplyMax(text);
        } catch (err) {
          ctx.addIssue({ code: "custom", message: (err as Error).message });
          return z.NEVER;
        }
      }),
    WORKER_METRICS_ADDR: address.default("127.0.0.1:9405"),
    WORKER_GRPC_ADDR: hostPort("0.0.0.0:7008").optional(),
    WORKER_WORKFLOW_BUNDLE: z
      .string()
      .startsWith("/", "must be the absolute path of a workflow bundle written by bundleLifecycleWorkflows")
      .optional(),
    WORKER_WORKFLOW_BUNDLE_TRACED: z
      .string()
      .startsWith(
        "/",
        "must be the absolute path of a workflow bundle written by bundleLifecycleWorkflows({ traced: true })",
      )
      .optional(),
    WORKER_AGENT_WORKFLOW_BUNDLE: z
      .string()
      .startsWith(
        "/",
        "must be the absolute path of an agent workflow bundle written by bundleAgentWorkflows",
      )
      .optional(),
    KERNEL_ADDRESS: hostPort("127.0.0.1:7001").optional(),
    AGENT_TASK_QUEUE: z.string().min(1).max(200).optional(),
    NATS_URL: natsUrlField(
      "set NATS_URL to the NATS server(s) carrying live notices (the agent's streamed text), or leave it unset",
    ).optional(),
    ...NATS_TLS_ENV,
    LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  })
  .superRefine((e, ctx) => {
    checkStoreEnv(e, ctx);
    checkTemporalTlsEnv(e, ctx);
    checkNatsTlsEnv(e, ctx);
  });

/** The validated configuration of `main.ts`. */
export interface WorkerConfig {
  temporalAddress: string;
  temporalNamespace: string;
  /** TLS and API key of both Temporal connections (TEMPORAL_TLS_*, TEMPORAL_API_KEY_FILE); `{}` = plaintext. */
  temporalSecurity: TemporalSecurity;
  /** Event-store URL (EVENT_STORE_URL, else `sqlite:<GATEHOUSE_DATA_DIR>/events.sqlite`); may hold a password: log it redacted. */
  eventStoreUrl: string;
  gatekeepers: Record<string, string>;
  /** Longest wait for one apply by gatekeeper kind, in ms (GATEKEEPER_APPLY_MAX); others: 15 min. */
  applyMaxMs: Record<string, number>;
  metrics: { host: string; port: number };
  /**
   * WORKER_GRPC_ADDR: where the AgentChats gRPC service listens (the gateway's AGENT_ADDRESS), e.g.
   * 0.0.0.0:7008; unset: not served (no gateway can reach the chats). Set, it is served whether the
   * agent is on or off (off: it answers `agent_off`, naming the AGENT_* variables).
   */
  grpc: { host: string; port: number } | undefined;
  /**
   * WORKER_WORKFLOW_BUNDLE: absolute path of the pre-built workflow bundle (the images ship one), or
   * undefined to bundle the workflows from source at start (a few seconds; needs the sources).
   */
  workflowBundlePath: string | undefined;
  /**
   * WORKER_WORKFLOW_BUNDLE_TRACED: the same, made with tracing's workflow interceptors; used instead of
   * WORKER_WORKFLOW_BUNDLE when tracing is on (OTEL_EXPORTER_OTLP_ENDPOINT, docs/observability.md).
   */
  workflowBundleTracedPath: string | undefined;
  logLevel: string;
  /**
   * The built-in agent (AGENT_* variables, see @gatehouse/agent-core/providers): undefined when no
   * model is configured (the agent is off); else its configuration, the kernel it runs snippets
   * through (KERNEL_ADDRESS, required then) and its task queue (AGENT_TASK_QUEUE, default gatehouse-agent).
   */
  agent:
    | {
        config: AgentConfig;
        kernelAddress: string;
        taskQueue: string | undefined;
        /**
         * WORKER_AGENT_WORKFLOW_BUNDLE: absolute path of the pre-built agent workflow bundle (the
         * services image ships one, bundleAgentWorkflows), or undefined to bundle from source at start.
         */
        workflowBundlePath: string | undefined;
      }
    | undefined;
  /**
   * NATS server(s) the agent publishes its model text to as it streams (NATS_URL; gateways forward
   * it to browsers as `chat-delta`); undefined: no deltas (each step's text is still recorded whole).
   */
  natsUrl: string | undefined;
  /** nats.js `tls` option from tls:// URLs and NATS_TLS_*; undefined = plaintext. */
  natsTls: NatsTlsOptions | undefined;
}

/** @throws Error naming each wrong variable and the fix. */
export function loadConfig(env: NodeJS.ProcessEnv): WorkerConfig {
  const e = parseEnv(EnvSchema, env, "worker");
  return {
    temporalAddress: e.TEMPORAL_ADDRESS,
    temporalNamespace: e.TEMPORAL_NAMESPACE,
    temporalSecurity: temporalSecurity(e),
    eventStoreUrl: storeUrlFromEnv(e) as string,
    gatekeepers: parseGatekeeperAddresses(e.GATEKEEPER_ADDRESSES),
    applyMaxMs: e.GATEKEEPER_APPLY_MAX,
    metrics: splitHostPort(e.WORKER_METRICS_ADDR),
    grpc: e.WORKER_GRPC_ADDR ? splitHostPort(e.WORKER_GRPC_ADDR) : undefined,
    workflowBundlePath: e.WORKER_WORKFLOW_BUNDLE,
    workflowBundleTracedPath: e.WORKER_WORKFLOW_BUNDLE_TRACED,
    logLevel: e.LOG_LEVEL,
    agent: agentOf(env, e.KERNEL_ADDRESS, e.AGENT_TASK_QUEUE, e.WORKER_AGENT_WORKFLOW_BUNDLE),
    natsUrl: e.NATS_URL,
    natsTls: natsTls(e),
  };
}

/** The agent part of the configuration. @throws Error naming the AGENT_* variable or KERNEL_ADDRESS. */
function agentOf(
  env: NodeJS.ProcessEnv,
  kernelAddress: string | undefined,
  taskQueue: string | undefined,
  workflowBundlePath: string | undefined,
): WorkerConfig["agent"] {
  let config: AgentConfig;
  try {
    config = agentConfigFromEnv(env);
  } catch (err) {
    throw new Error(`worker configuration: ${(err as Error).message}`);
  }
  if (!agentEnabled(config)) return undefined;
  if (!kernelAddress)
    throw new Error(
      "worker configuration: KERNEL_ADDRESS is required when the built-in agent is on (AGENT_PROVIDER or AGENT_MODELS_FILE is set): the kernel's host:port, e.g. 127.0.0.1:7001",
    );
  return { config, kernelAddress, taskQueue, workflowBundlePath };
}
