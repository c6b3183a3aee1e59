/**
 * Kernel process entry. Configuration from environment variables (validated):
 *   KERNEL_ADDR                    listen address, default 127.0.0.1:7001
 *   EVENT_STORE_URL                event store: sqlite:<path> or postgres://… (default sqlite:<GATEHOUSE_DATA_DIR>/events.sqlite)
 *   GATEHOUSE_DATA_DIR             data directory of the embedded store when EVENT_STORE_URL is unset (default ./.gatehouse)
 *   GATEHOUSE_CALLER_TOKEN_SECRET  shared with the approval service, ≥ 32 bytes
 *   GATEKEEPER_ADDRESSES           "mcp=127.0.0.1:7003[,git=...][,postgres=...]"
 *   SANDBOX_RUNNER_ADDRESS         default 127.0.0.1:7004
 *   TEMPORAL_ADDRESS               Temporal frontend host:port (await-decision turns); required
 *   TEMPORAL_NAMESPACE             default "default"
 *   TEMPORAL_TLS, TEMPORAL_TLS_CA_FILE, TEMPORAL_TLS_CERT_FILE, TEMPORAL_TLS_KEY_FILE,
 *   TEMPORAL_TLS_SERVER_NAME, TEMPORAL_API_KEY_FILE   TLS / API key of the Temporal client (service-kit)
 *   KERNEL_METRICS_ADDR            /metrics and /healthz, default 127.0.0.1:9401
 *   LOG_LEVEL                      pino level, default info
 */
import {
  EVENT_STORE_URL_ENV,
  type EventStore,
  openEventStore,
  redactUrl,
  storeUrlFromEnv,
} from "@gatehouse/event-store";
import {
  checkTemporalTlsEnv,
  describeTemporalSecurity,
  parseEnv,
  startOpsHttp,
  TEMPORAL_TLS_ENV,
  temporalSecurity,
} from "@gatehouse/service-kit";
import { startServiceProcessTracing, stopTracing } from "@gatehouse/telemetry";
import pino from "pino";
import { z } from "zod";
import { startKernel } from "./index.ts";

const Config = z
  .object({
    KERNEL_ADDR: z
      .string()
      .regex(/^[^:]+:\d+$/, "must be host:port")
      .default("127.0.0.1:7001"),
    GATEHOUSE_DATA_DIR: z.string().default(".gatehouse"),
    EVENT_STORE_URL: EVENT_STORE_URL_ENV,
    GATEHOUSE_CALLER_TOKEN_SECRET: z.string().min(32, "must be at least 32 bytes"),
    GATEKEEPER_ADDRESSES: z
      .string()
      .default("mcp=127.0.0.1:7003")
      .transform((s, ctx) => {
        const out: Record<string, string> = {};
        for (const pair of s.split(",").filter(Boolean)) {
          const m = /^([a-z]+)=([^=]+:\d+)$/.exec(pair.trim());
          if (!m) {
            ctx.addIssue({ code: "custom", message: `"${pair}" is not kind=host:port` });
            return z.NEVER;
          }
          out[m[1]!] = m[2]!;
        }
        return out;
      }),
    SANDBOX_RUNNER_ADDRESS: z.string().default("127.0.0.1:7004"),
    TEMPORAL_ADDRESS: z.string().regex(/^[^:]+:\d+$/, "must be host:port of the Temporal frontend"),
    TEMPORAL_NAMESPACE: z.string().min(1).default("default"),
    ...TEMPORAL_TLS_ENV,
    KERNEL_METRICS_ADDR: z
      .string()
      .regex(/^[^:]+:\d+$/, "must be host:port")
      .default("127.0.0.1:9401"),
    LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  })
  .superRefine(checkTemporalTlsEnv);

let config: z.output<typeof Config>;
try {
  config = parseEnv(Config, process.env, "kernel");
} catch (err) {
  console.error((err as Error).message);
  process.exit(2);
}
const logger = pino({ level: config.LOG_LEVEL }).child({ component: "kernel" });
await startServiceProcessTracing("kernel", logger);
const temporalTls = temporalSecurity(config);
const storeUrl = storeUrlFromEnv(config) as string;
let store: EventStore;
try {
  store = await openEventStore(storeUrl);
} catch (err) {
  // StoreUnavailable / StoreSchemaMismatch name the URL (password redacted) and the fix.
  logger.fatal({ event: "event_store_unavailable" }, (err as Error).message);
  process.exit(1);
}
const [host, port] = config.KERNEL_ADDR.split(":") as [string, string];
const kernel = await startKernel({
  store,
  callerTokenSecret: config.GATEHOUSE_CALLER_TOKEN_SECRET,
  gatekeepers: config.GATEKEEPER_ADDRESSES,
  sandboxRunnerAddress: config.SANDBOX_RUNNER_ADDRESS,
  temporal: { address: config.TEMPORAL_ADDRESS, namespace: config.TEMPORAL_NAMESPACE, ...temporalTls },
  host,
  port: Number(port),
  logger,
});
let healthy = true;
const [opsHost, opsPort] = config.KERNEL_METRICS_ADDR.split(":") as [string, string];
const ops = await startOpsHttp({
  host: opsHost,
  port: Number(opsPort),
  registry: kernel.metrics.registry,
  healthy: () => healthy,
});
logger.info(
  {
    event: "config",
    addr: config.KERNEL_ADDR,
    eventStore: redactUrl(storeUrl),
    gatekeepers: config.GATEKEEPER_ADDRESSES,
    temporal: config.TEMPORAL_ADDRESS,
    temporalSecurity: describeTemporalSecurity(temporalTls),
  },
  "kernel started",
);
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.once(sig, async () => {
    healthy = false;
    await kernel.close();
    await ops.close();
    await store.close();
    await stopTracing();
    process.exit(0);
  });
}
