/**
 * Process entry of gatekeeper-mcp. Environment (validated with zod at start-up):
 * - GATEKEEPER_MCP_ADDR          host:port of the gRPC server (default 127.0.0.1:7003)
 * - APPROVAL_ADDRESS             host:port of the approval service (required)
 * - GATEKEEPER_MCP_REGISTRY      path of the YAML server registry (required)
 * - GATEKEEPER_MCP_METRICS_ADDR  host:port of /metrics and /healthz (default 127.0.0.1:9403)
 * - LOG_LEVEL                    pino level (default info)
 */

import { hostPort, parseEnv, splitHostPort, startOpsHttp, stopOnSignals } from "@gatehouse/service-kit";
import { startServiceProcessTracing, stopTracing } from "@gatehouse/telemetry";
import { pino } from "pino";
import { z } from "zod";
import { startMcpGatekeeper } from "./index.ts";
import { loadRegistryFile } from "./registry.ts";

const HostPort = hostPort("127.0.0.1:7003");

const Env = z.object({
  GATEKEEPER_MCP_ADDR: HostPort.default("127.0.0.1:7003"),
  APPROVAL_ADDRESS: HostPort,
  GATEKEEPER_MCP_REGISTRY: z.string().min(1, "must be the path of the YAML server registry"),
  GATEKEEPER_MCP_METRICS_ADDR: HostPort.default("127.0.0.1:9403"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

async function main(): Promise<void> {
  let env: z.output<typeof Env>;
  try {
    env = parseEnv(Env, process.env, "gatekeeper-mcp");
  } catch (err) {
    console.error((err as Error).message);
    process.exit(2);
  }
  const logger = pino({ level: env.LOG_LEVEL, base: { service: "gatekeeper-mcp" } });
  await startServiceProcessTracing("gatekeeper-mcp", logger);
  const registry = await loadRegistryFile(env.GATEKEEPER_MCP_REGISTRY);
  const { host, port } = splitHostPort(env.GATEKEEPER_MCP_ADDR);
  const gk = await startMcpGatekeeper({
    registry,
    approvalAddress: env.APPROVAL_ADDRESS,
    host,
    port,
    logger,
  });
  const ops = splitHostPort(env.GATEKEEPER_MCP_METRICS_ADDR);
  const http = await startOpsHttp({ ...ops, registry: gk.metrics.registry, healthy: gk.healthy });
  logger.info(
    {
      event: "config",
      grpc: `${host}:${gk.port}`,
      approval: env.APPROVAL_ADDRESS,
      registry: env.GATEKEEPER_MCP_REGISTRY,
      servers: Object.keys(registry.servers),
      endpoints: Object.keys(registry.endpoints),
      ops: `${ops.host}:${http.port}`,
    },
    "gatekeeper-mcp configured",
  );
  stopOnSignals(
    logger,
    () => gk.close(),
    () => http.close(),
    () => stopTracing(),
  );
}

main().catch((err: unknown) => {
  console.error(`gatekeeper-mcp failed to start: ${(err as Error).message}`);
  process.exit(1);
});
