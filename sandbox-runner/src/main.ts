/**
 * Process entry of the sandbox runner. Environment: SANDBOX_RUNNER_ADDR (default 127.0.0.1:7004),
 * SANDBOX_RUNNER_METRICS_ADDR (default 127.0.0.1:9474, /healthz and /metrics), SANDBOX_MODE
 * (gvisor|none|auto), SANDBOX_MAX_CONCURRENT, SANDBOX_DATA_DIR, LOG_LEVEL.
 * Run with `node --no-node-snapshot --import tsx src/main.ts` (isolated-vm needs --no-node-snapshot).
 */

import { startOpsHttp } from "@gatehouse/service-kit";
import pino from "pino";
import { collectDefaultMetrics } from "prom-client";
import { loadConfig } from "./config.ts";
import { startSandboxRunner } from "./index.ts";

const bootLogger = pino({ level: "info" }).child({ component: "sandbox-runner" });
let config: ReturnType<typeof loadConfig>;
try {
  config = loadConfig();
} catch (error) {
  bootLogger.fatal({ event: "config_invalid" }, (error as Error).message);
  process.exit(2);
}
const logger = pino({ level: config.logLevel });
logger.info({ component: "sandbox-runner", event: "config", config }, "sandbox runner configuration");

try {
  const runner = await startSandboxRunner({
    host: config.host,
    port: config.port,
    mode: config.mode,
    logger,
    maxConcurrent: config.maxConcurrent,
    dataDir: config.dataDir,
  });
  collectDefaultMetrics({ register: runner.metrics.registry });
  let serving = true;
  const health = await startOpsHttp({
    host: config.metricsHost,
    port: config.metricsPort,
    registry: runner.metrics.registry,
    healthy: () => serving,
  });
  logger.info(
    { component: "sandbox-runner", event: "health_listening", port: health.port },
    "health and metrics listening",
  );
  const shutdown = async (signal: string) => {
    logger.info({ component: "sandbox-runner", event: "shutdown", signal }, "shutting down");
    serving = false;
    await health.close();
    await runner.close();
    process.exit(0);
  };
  process.once("SIGINT", () => void shutdown("SIGINT"));
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
} catch (error) {
  logger.fatal({ component: "sandbox-runner", event: "start_failed", err: error }, (error as Error).message);
  process.exit(1);
}
