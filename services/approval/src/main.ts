/**
 * Process entry of the approval service: configuration from the environment (config.ts), the
 * event store at $EVENT_STORE_URL (sqlite:<path> or postgres://…; default sqlite:$GATEHOUSE_DATA_DIR/events.sqlite), the Temporal client to
 * $TEMPORAL_ADDRESS/$TEMPORAL_NAMESPACE (TLS from $TEMPORAL_TLS_*), gRPC on $APPROVAL_ADDR, gatekeepers for RequestRevert
 * from $GATEKEEPER_ADDRESSES ("mcp=host:port,git=host:port"), optional
 * /healthz + /metrics on $METRICS_ADDR, live change notices to NATS at $NATS_URL (optional; TLS from tls:// or $NATS_TLS_*),
 * graceful shutdown on SIGTERM/SIGINT.
 */
import { type EventStore, openEventStore, redactUrl } from "@gatehouse/event-store";
import { connectNatsNoticeBus, type NoticeBus } from "@gatehouse/live-notices";
import { describeTemporalSecurity, startOpsHttp, stopOnSignals } from "@gatehouse/service-kit";
import { startServiceProcessTracing, stopTracing } from "@gatehouse/telemetry";
import pino from "pino";
import { loadConfig } from "./config.ts";
import { startApprovalService } from "./index.ts";

const bootLogger = pino({ base: { component: "approval" } });
let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig(process.env);
} catch (err) {
  bootLogger.fatal({ event: "config_invalid" }, (err as Error).message);
  process.exit(2);
}
const logger = pino({ level: config.logLevel }); // startApprovalService adds component="approval"
await startServiceProcessTracing("approval", logger.child({ component: "approval" }));
logger.info(
  {
    component: "approval",
    event: "config",
    addr: `${config.host}:${config.port}`,
    eventStore: redactUrl(config.eventStoreUrl),
    readModel: config.readModelUrl ? redactUrl(config.readModelUrl) : "memory",
    temporal: {
      address: config.temporal.address,
      namespace: config.temporal.namespace,
      ...describeTemporalSecurity(config.temporal),
    },
    actionTtlMs: config.actionTtlMs,
    ...(config.applyRunMax ? { applyRunMax: config.applyRunMax } : {}),
    gatekeepers: config.gatekeepers,
    metrics: config.metrics ? `${config.metrics.host}:${config.metrics.port}` : "off",
    nats: config.natsUrl ?? "off",
    natsTls: config.natsTls ?? "off",
  },
  "approval configuration",
);

let store: EventStore;
try {
  store = await openEventStore(config.eventStoreUrl);
} catch (err) {
  // StoreUnavailable / StoreSchemaMismatch name the URL (password redacted) and the fix.
  logger.fatal({ component: "approval", event: "event_store_unavailable" }, (err as Error).message);
  process.exit(1);
}
let notices: NoticeBus | undefined;
let service: Awaited<ReturnType<typeof startApprovalService>>;
try {
  if (config.natsUrl) {
    notices = await connectNatsNoticeBus({
      servers: config.natsUrl,
      ...(config.natsTls ? { tls: config.natsTls } : {}),
      name: "gatehouse-approval",
      onStatus: (s) => logger.info({ component: "approval", event: "nats_status", status: s.type }),
    });
  }
  service = await startApprovalService({
    ...(notices ? { notices } : {}),
    store,
    callerTokenSecret: config.callerTokenSecret,
    ...(config.readModelUrl ? { readModelUrl: config.readModelUrl } : {}),
    temporal: config.temporal,
    actionTtlMs: config.actionTtlMs,
    ...(config.applyRunMax ? { applyRunMax: config.applyRunMax } : {}),
    gatekeepers: config.gatekeepers,
    host: config.host,
    port: config.port,
    logger,
  });
} catch (err) {
  logger.fatal({ component: "approval", event: "start_failed" }, (err as Error).message);
  await notices?.close();
  await store.close();
  process.exit(1);
}
let serving = true;
const health = config.metrics
  ? await startOpsHttp({
      host: config.metrics.host,
      port: config.metrics.port,
      registry: service.metrics,
      healthy: () => serving,
    })
  : undefined;

stopOnSignals(
  logger.child({ component: "approval" }),
  () => {
    serving = false;
  },
  () => service.close(),
  async () => health?.close(),
  async () => notices?.close(),
  () => store.close(),
  () => stopTracing(),
);
