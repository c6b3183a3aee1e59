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
 *   NOTIFY_SMTP_URL                smtp://host:port or smtps://host:port: email notifications (docs/notifications.md)
 *   NOTIFY_SMTP_AUTH_FILE          YAML/JSON file {user, pass} for the SMTP server (kept out of URLs and logs)
 *   NOTIFY_FROM                    sender address of notification emails; required with NOTIFY_SMTP_URL
 *   NOTIFY_WEBHOOKS_FILE           YAML/JSON webhook registry: name -> {url, format: slack|teams|json}
 *   NOTIFY_TIMEOUT_MS              longest wait for one send, default 5000
 *   GATEWAY_PUBLIC_URL             the web app's public URL (the gateway's): review links start with it;
 *                                  required when NOTIFY_SMTP_URL or NOTIFY_WEBHOOKS_FILE is set
 *   LOG_LEVEL                      pino level, default info
 */
import {
  EVENT_STORE_URL_ENV,
  type EventStore,
  openEventStore,
  redactUrl,
  storeUrlFromEnv,
} from "@gatehouse/event-store";
import { loadNotifyConfig, type NotifyConfig } from "@gatehouse/notify";
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
    NOTIFY_SMTP_URL: z.string().optional(),
    NOTIFY_SMTP_AUTH_FILE: z.string().optional(),
    NOTIFY_FROM: z.string().optional(),
    NOTIFY_WEBHOOKS_FILE: z.string().optional(),
    NOTIFY_TIMEOUT_MS: z.coerce
      .number()
      .int()
      .positive("must be a positive number of milliseconds")
      .optional(),
    GATEWAY_PUBLIC_URL: z.string().optional(),
  })
  .superRefine(checkTemporalTlsEnv);

let config: z.output<typeof Config>;
let notify: NotifyConfig | undefined;
try {
  config = parseEnv(Config, process.env, "kernel");
  notify = notifyConfig(config);
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
  ...(notify ? { notify } : {}),
  // Several replicas on one PostgreSQL store: one of them (the lock holder) sends.
  ...(notify && /^postgres(ql)?:/.test(storeUrl) ? { notifyLeaderUrl: storeUrl } : {}),
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
    notifications: notify
      ? {
          email: Boolean(notify.smtpUrl),
          webhooks: Object.keys(notify.webhooks),
          publicUrl: notify.publicUrl,
        }
      : "off",
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

/**
 * The notification settings from NOTIFY_* and GATEWAY_PUBLIC_URL; undefined (off) when neither an SMTP
 * URL nor a webhook registry is set.
 * @throws Error naming the variable that is wrong.
 */
function notifyConfig(env: z.output<typeof Config>): NotifyConfig | undefined {
  if (!env.NOTIFY_SMTP_URL && !env.NOTIFY_WEBHOOKS_FILE) return undefined;
  if (!env.GATEWAY_PUBLIC_URL) {
    throw new Error(
      "kernel: GATEWAY_PUBLIC_URL: required with NOTIFY_SMTP_URL or NOTIFY_WEBHOOKS_FILE (review links start with the web app's public URL, e.g. https://gatehouse.example.com)",
    );
  }
  try {
    return loadNotifyConfig({
      smtpUrl: env.NOTIFY_SMTP_URL,
      smtpAuthFile: env.NOTIFY_SMTP_AUTH_FILE,
      from: env.NOTIFY_FROM,
      publicUrl: env.GATEWAY_PUBLIC_URL,
      webhooksFile: env.NOTIFY_WEBHOOKS_FILE,
      timeoutMs: env.NOTIFY_TIMEOUT_MS,
    });
  } catch (err) {
    // loadNotifyConfig names its fields (smtpUrl, from, publicUrl, webhooks.<name>); say which variable.
    throw new Error(
      `kernel: ${(err as Error).message} (variables: smtpUrl = NOTIFY_SMTP_URL, smtpAuth = NOTIFY_SMTP_AUTH_FILE, from = NOTIFY_FROM, publicUrl = GATEWAY_PUBLIC_URL, webhooks = NOTIFY_WEBHOOKS_FILE)`,
    );
  }
}
