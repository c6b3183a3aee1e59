/**
 * Process entry of the gateway: configuration from the environment (config.ts) — GATEWAY_ADDR,
 * APPROVAL_ADDRESS, KERNEL_ADDRESS, NATS_URL (+ NATS_TLS_CA_FILE/NATS_TLS_CERT_FILE/NATS_TLS_KEY_FILE), OIDC_ISSUER/OIDC_AUDIENCE[/OIDC_JWKS_URL/OIDC_ROLES_CLAIM/
 * OIDC_ROLE_MAP], GATEWAY_DEV_TOKENS_FILE, GATEWAY_WEB_DIST, METRICS_ADDR, GATEWAY_PUBLIC_URL,
 * GATEWAY_MCP_MAX_SESSIONS, GATEWAY_MCP_IDLE_MINUTES, GATEWAY_MCP_ALLOWED_ORIGINS, GATEWAY_DRAIN_SECONDS,
 * GATEHOUSE_SANDBOX_WEAKENED (reported by /healthz) — live
 * notices from NATS, optional /healthz + /metrics on METRICS_ADDR, and on SIGTERM/SIGINT a drain then a
 * graceful shutdown: `/healthz` answers 503 at once while the API keeps serving for GATEWAY_DRAIN_SECONDS
 * (answers carry `Connection: close`), then the server stops accepting, finishes the requests under way
 * and the process exits. A second signal ends the drain early.
 */
import { connectNatsNoticeBus } from "@gatehouse/live-notices";
import { Drain, startOpsHttp, stopOnSignals } from "@gatehouse/service-kit";
import { startServiceProcessTracing, stopTracing } from "@gatehouse/telemetry";
import pino from "pino";
import { loadConfig } from "./config.ts";
import { startGateway } from "./index.ts";

const bootLogger = pino({ base: { component: "gateway" } });
let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig(process.env);
} catch (err) {
  bootLogger.fatal({ event: "config_invalid" }, (err as Error).message);
  process.exit(2);
}
const logger = pino({ level: config.logLevel });
await startServiceProcessTracing("gateway", logger.child({ component: "gateway" }));
logger.info(
  {
    component: "gateway",
    event: "config",
    addr: `${config.host}:${config.port}`,
    approval: config.approvalAddress,
    kernel: config.kernelAddress,
    agent: config.agentAddress ?? "off (AGENT_ADDRESS unset)",
    nats: config.natsUrl,
    natsTls: config.natsTls ?? "off",
    oidcIssuer: config.oidc?.issuer ?? "off",
    devTokens: config.devTokens?.length ?? 0,
    webDist: config.webDist ?? "none",
    metrics: config.metrics ? `${config.metrics.host}:${config.metrics.port}` : "off",
    publicUrl: config.publicUrl ?? "the listening address",
    mcpMaxSessions: config.mcp.maxSessions,
    mcpIdleMinutes: config.mcp.idleMs / 60_000,
    mcpAllowedOrigins: config.mcp.allowedOrigins,
    drainSeconds: config.drainSeconds,
  },
  "gateway configuration",
);
if (config.devTokens?.length) {
  logger.warn(
    { component: "gateway", event: "dev_tokens" },
    "static dev tokens are enabled: for local use only",
  );
}

if (config.sandboxWeakened.length) {
  logger.warn(
    { component: "gateway", event: "sandbox_weakened", sandboxWeakened: config.sandboxWeakened },
    `SANDBOX WEAKENED: ${config.sandboxWeakened.join(", ")} (GATEHOUSE_SANDBOX_WEAKENED; /healthz reports it)`,
  );
}

const drain = new Drain(config.drainSeconds * 1000);
let gateway: Awaited<ReturnType<typeof startGateway>>;
let notices: Awaited<ReturnType<typeof connectNatsNoticeBus>>;
try {
  notices = await connectNatsNoticeBus({
    servers: config.natsUrl,
    ...(config.natsTls ? { tls: config.natsTls } : {}),
    name: "gatehouse-gateway",
    onStatus: (s) => logger.info({ component: "gateway", event: "nats_status", status: s.type }),
  });
  gateway = await startGateway({
    approvalAddress: config.approvalAddress,
    kernelAddress: config.kernelAddress,
    ...(config.agentAddress ? { agentAddress: config.agentAddress } : {}),
    notices,
    ...(config.oidc ? { oidc: config.oidc } : {}),
    ...(config.devTokens ? { devTokens: config.devTokens } : {}),
    ...(config.webDist ? { webDist: config.webDist } : {}),
    host: config.host,
    port: config.port,
    ...(config.publicUrl ? { publicUrl: config.publicUrl } : {}),
    mcp: config.mcp,
    draining: drain.draining,
    sandboxWeakened: config.sandboxWeakened,
    logger,
  });
} catch (err) {
  logger.fatal({ component: "gateway", event: "start_failed" }, (err as Error).message);
  process.exit(1);
}
const ops = config.metrics
  ? await startOpsHttp({
      host: config.metrics.host,
      port: config.metrics.port,
      registry: gateway.metrics,
      healthy: drain.ready,
    })
  : undefined;
stopOnSignals(
  logger,
  () => drain.drain(logger),
  async () => {
    await gateway.close();
    await ops?.close();
    await notices.close();
    await stopTracing();
  },
);
