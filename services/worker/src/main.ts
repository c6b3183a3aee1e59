/**
 * Process entry of the lifecycle worker (split mode): configuration from the environment
 * (config.ts), the event store at $EVENT_STORE_URL (default sqlite:$GATEHOUSE_DATA_DIR/events.sqlite), Temporal at
 * $TEMPORAL_ADDRESS (TLS and API key from $TEMPORAL_TLS_*, $TEMPORAL_API_KEY_FILE), /metrics + /healthz on $WORKER_METRICS_ADDR, the workflow code from
 * $WORKER_WORKFLOW_BUNDLE when set (with tracing on, $WORKER_WORKFLOW_BUNDLE_TRACED when set; else bundled from
 * source), traces when $OTEL_EXPORTER_OTLP_ENDPOINT is set (docs/observability.md), graceful shutdown on SIGTERM/SIGINT.
 * With a model configured (AGENT_PROVIDER + AGENT_MODEL, or AGENT_MODELS_FILE) it also runs the
 * built-in agent's worker (task queue $AGENT_TASK_QUEUE, default gatehouse-agent) against the kernel
 * at $KERNEL_ADDRESS, publishing the model's text as it streams to NATS at $NATS_URL when set
 * (TLS from tls:// or $NATS_TLS_*; unset: no streamed text, each step is still recorded whole).
 * With $WORKER_GRPC_ADDR set, the AgentChats gRPC service (the gateway's AGENT_ADDRESS) listens
 * there, the agent on or off (off: it answers `agent_off`).
 */
import { readFileSync } from "node:fs";
import { describeAgentConfig } from "@gatehouse/agent-core/providers";
import { type EventStore, openEventStore, redactUrl } from "@gatehouse/event-store";
import { connectNatsNoticeBus, type NoticeBus } from "@gatehouse/live-notices";
import { describeTemporalSecurity, startOpsHttp, stopOnSignals } from "@gatehouse/service-kit";
import { startServiceProcessTracing, stopTracing } from "@gatehouse/telemetry";
import pino from "pino";
import { loadConfig, type WorkerConfig } from "./config.ts";
import { type Agent, startAgent, startAgentChatsServer, startLifecycleWorker } from "./index.ts";

const bootLogger = pino({ base: { component: "worker" } });
let config: WorkerConfig;
try {
  config = loadConfig(process.env);
} catch (err) {
  bootLogger.fatal({ event: "config_invalid" }, (err as Error).message);
  process.exit(2);
}
const logger = pino({ level: config.logLevel });
const tracing = await startServiceProcessTracing("worker", logger.child({ component: "worker" }));
logger.info(
  {
    component: "worker",
    event: "config",
    temporal: config.temporalAddress,
    namespace: config.temporalNamespace,
    temporalSecurity: describeTemporalSecurity(config.temporalSecurity),
    eventStore: redactUrl(config.eventStoreUrl),
    gatekeepers: config.gatekeepers,
    applyMaxMs: config.applyMaxMs,
    metrics: `${config.metrics.host}:${config.metrics.port}`,
    agentGrpc: config.grpc
      ? `${config.grpc.host}:${config.grpc.port}`
      : "off (set WORKER_GRPC_ADDR to serve the chats to the gateway)",
    workflowBundle: config.workflowBundlePath ?? "bundled at start",
    agent: config.agent
      ? {
          ...describeAgentConfig(config.agent.config),
          kernel: config.agent.kernelAddress,
          streamedText: config.natsUrl ? "to NATS" : "off (no NATS_URL)",
        }
      : "off (no AGENT_PROVIDER / AGENT_MODELS_FILE)",
    nats: config.natsUrl ?? "off",
    natsTls: config.natsTls ? "on" : "off",
  },
  "worker configuration",
);

let workflowBundle: { code: string } | undefined;
// Traced, the bundle with tracing's workflow interceptors when one is given.
const [bundleVariable, bundlePath] =
  tracing.enabled && config.workflowBundleTracedPath
    ? ["WORKER_WORKFLOW_BUNDLE_TRACED", config.workflowBundleTracedPath]
    : ["WORKER_WORKFLOW_BUNDLE", config.workflowBundlePath];
if (bundlePath) {
  try {
    workflowBundle = { code: readFileSync(bundlePath, "utf8") };
  } catch (err) {
    bootLogger.fatal({ event: "config_invalid" }, `${bundleVariable}: ${(err as Error).message}`);
    process.exit(2);
  }
}

// The agent's workflow code, pre-bundled (the image has no sources to bundle it from at start).
let agentBundle: { code: string } | undefined;
if (config.agent?.workflowBundlePath) {
  try {
    agentBundle = { code: readFileSync(config.agent.workflowBundlePath, "utf8") };
  } catch (err) {
    bootLogger.fatal({ event: "config_invalid" }, `WORKER_AGENT_WORKFLOW_BUNDLE: ${(err as Error).message}`);
    process.exit(2);
  }
}

let store: EventStore;
try {
  store = await openEventStore(config.eventStoreUrl);
} catch (err) {
  // StoreUnavailable / StoreSchemaMismatch name the URL (password redacted) and the fix.
  logger.fatal({ component: "worker", event: "event_store_unavailable" }, (err as Error).message);
  process.exit(1);
}
const worker = await startLifecycleWorker({
  store,
  temporal: {
    address: config.temporalAddress,
    namespace: config.temporalNamespace,
    ...config.temporalSecurity,
  },
  gatekeepers: config.gatekeepers,
  applyMaxMs: config.applyMaxMs,
  logger,
  ...(workflowBundle ? { workflowBundle } : {}),
});
// The model's text as it streams goes to NATS when NATS_URL is set (only the agent publishes there).
let notices: NoticeBus | undefined;
if (config.agent && config.natsUrl) {
  try {
    notices = await connectNatsNoticeBus({
      servers: config.natsUrl,
      ...(config.natsTls ? { tls: config.natsTls } : {}),
      name: "gatehouse-worker",
      onStatus: (s) => logger.info({ component: "worker", event: "nats_status", status: s.type }),
    });
  } catch (err) {
    // NatsUnreachable names the URL and the fix.
    logger.fatal({ component: "worker", event: "nats_unreachable" }, (err as Error).message);
    process.exit(1);
  }
}
const bus = notices;
// The agent's worker (when a model is configured) and its chat operations (off: they answer agent_off).
const agent: Agent = await startAgent({
  ...(agentBundle ? { workflowBundle: agentBundle } : {}),
  store,
  temporal: {
    address: config.temporalAddress,
    namespace: config.temporalNamespace,
    ...config.temporalSecurity,
  },
  kernelAddress: config.agent?.kernelAddress ?? "",
  config: config.agent?.config,
  logger,
  ...(config.agent?.taskQueue ? { taskQueue: config.agent.taskQueue } : {}),
  ...(bus ? { deltas: (delta) => bus.publishChatDelta(delta) } : {}),
});
const grpcAddr = config.grpc;
const agentGrpc = grpcAddr
  ? await startAgentChatsServer({
      chats: agent.chats,
      host: grpcAddr.host,
      port: grpcAddr.port,
      registry: worker.metrics,
      logger,
    }).catch(async (err: unknown) => {
      logger.fatal(
        { component: "worker", event: "agent_grpc_failed" },
        `cannot listen on WORKER_GRPC_ADDR ${grpcAddr.host}:${grpcAddr.port}: ${(err as Error).message}`,
      );
      await agent.close();
      await worker.close();
      await store.close();
      process.exit(1);
    })
  : undefined;
if (!agentGrpc && config.agent)
  logger.warn(
    { component: "worker", event: "agent_api_off" },
    "the built-in agent is on but WORKER_GRPC_ADDR is unset: no gateway can start or read its chats; set WORKER_GRPC_ADDR (e.g. 0.0.0.0:7008) and the gateway's AGENT_ADDRESS",
  );
let serving = true;
const ops = await startOpsHttp({
  host: config.metrics.host,
  port: config.metrics.port,
  registry: worker.metrics,
  healthy: () => serving,
});
logger.info({ component: "worker", event: "ready", metricsPort: ops.port, agentGrpcPort: agentGrpc?.port });

stopOnSignals(
  logger.child({ component: "worker" }),
  () => {
    serving = false;
  },
  async () => agentGrpc?.close(),
  () => worker.close(),
  () => agent.close(),
  async () => notices?.close(),
  () => ops.close(),
  () => store.close(),
  () => stopTracing(),
);
