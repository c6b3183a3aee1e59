/**
 * Process entry of gatekeeper-postgres. Environment (validated with zod at start-up):
 * - GATEKEEPER_POSTGRES_ADDR          host:port of the gRPC server (default 127.0.0.1:7007)
 * - APPROVAL_ADDRESS                  host:port of the approval service (required)
 * - GATEKEEPER_POSTGRES_REGISTRY      path of the administrator's YAML registry of servers (required;
 *                                     registry.ts; a Secret on Kubernetes)
 * - GATEKEEPER_POSTGRES_METRICS_ADDR  host:port of /metrics and /healthz (default 127.0.0.1:9407)
 * - SANDBOX_MAX_FRAME_BYTES           the sandbox runners' frame cap, bytes (default 1048576, as theirs);
 *                                     every page is sized to fit one frame under it
 * - LOG_LEVEL                         pino level (default info)
 * Passwords are read from the files or environment variables the registry names.
 */
import { DEFAULT_MAX_FRAME_BYTES, MAX_MAX_FRAME_BYTES, MIN_MAX_FRAME_BYTES } from "@gatehouse/gatekeeper-kit";
import { hostPort, parseEnv, splitHostPort, startOpsHttp, stopOnSignals } from "@gatehouse/service-kit";
import { startServiceProcessTracing, stopTracing } from "@gatehouse/telemetry";
import { pino } from "pino";
import { z } from "zod";
import { loadRegistryFile, type RegistryConfig, startPostgresGatekeeper } from "./index.ts";

const HostPort = hostPort("127.0.0.1:7007");

const Env = z.object({
  GATEKEEPER_POSTGRES_ADDR: HostPort.default("127.0.0.1:7007"),
  APPROVAL_ADDRESS: HostPort,
  GATEKEEPER_POSTGRES_REGISTRY: z
    .string()
    .min(1, "must name the YAML registry of PostgreSQL servers, e.g. /etc/gatekeeper-postgres/registry.yaml"),
  GATEKEEPER_POSTGRES_METRICS_ADDR: HostPort.default("127.0.0.1:9407"),
  SANDBOX_MAX_FRAME_BYTES: z.coerce
    .number()
    .int()
    .min(MIN_MAX_FRAME_BYTES)
    .max(MAX_MAX_FRAME_BYTES)
    .default(DEFAULT_MAX_FRAME_BYTES),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

async function main(): Promise<void> {
  let env: z.output<typeof Env>;
  try {
    env = parseEnv(Env, process.env, "gatekeeper-postgres");
  } catch (err) {
    console.error((err as Error).message);
    process.exit(2);
  }
  const logger = pino({ level: env.LOG_LEVEL, base: { service: "gatekeeper-postgres" } });
  await startServiceProcessTracing("gatekeeper-postgres", logger);
  let registry: RegistryConfig;
  try {
    registry = await loadRegistryFile(env.GATEKEEPER_POSTGRES_REGISTRY);
  } catch (e) {
    console.error(`gatekeeper-postgres: GATEKEEPER_POSTGRES_REGISTRY: ${(e as Error).message}`);
    process.exit(2);
  }
  if (Object.keys(registry.servers).length === 0)
    logger.warn(
      { event: "registry_empty", registry: env.GATEKEEPER_POSTGRES_REGISTRY },
      "the postgres registry names no servers: every postgres:// binding will be refused until servers are added",
    );
  const { host, port } = splitHostPort(env.GATEKEEPER_POSTGRES_ADDR);
  const gk = await startPostgresGatekeeper({
    registry,
    approvalAddress: env.APPROVAL_ADDRESS,
    host,
    port,
    logger,
    limits: { maxFrameBytes: env.SANDBOX_MAX_FRAME_BYTES },
  });
  const ops = splitHostPort(env.GATEKEEPER_POSTGRES_METRICS_ADDR);
  const http = await startOpsHttp({ ...ops, registry: gk.metrics.registry, healthy: gk.healthy });
  logger.info(
    {
      event: "config",
      grpc: `${host}:${gk.port}`,
      approval: env.APPROVAL_ADDRESS,
      servers: Object.entries(registry.servers).map(([name, s]) => ({ name, databases: s.databases })),
      ops: `${ops.host}:${http.port}`,
      maxFrameBytes: env.SANDBOX_MAX_FRAME_BYTES,
    },
    "gatekeeper-postgres configured",
  );
  stopOnSignals(
    logger,
    () => gk.close(),
    () => http.close(),
    () => stopTracing(),
  );
}

main().catch((err: unknown) => {
  console.error(`gatekeeper-postgres failed to start: ${(err as Error).message}`);
  process.exit(1);
});
