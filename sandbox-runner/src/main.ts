/**
 * Process entry of the sandbox runner: `node --no-node-snapshot --import tsx src/main.ts [--insecure-no-gvisor]`
 * (isolated-vm needs --no-node-snapshot).
 *
 * Flags: `--insecure-no-gvisor` — consent to run without gVisor (same as SANDBOX_INSECURE_NO_GVISOR=1).
 * Without runsc on PATH the runner refuses to start unless it is given; SANDBOX_MODE=none needs it too.
 *
 * Environment: SANDBOX_RUNNER_ADDR (default 127.0.0.1:7004), SANDBOX_RUNNER_METRICS_ADDR (default
 * 127.0.0.1:9474: /healthz, /metrics, /status), SANDBOX_MODE (gvisor|gvisor-pod|kubernetes|none|auto; gvisor-pod: the runner itself runs under gVisor, verified; kubernetes: a pod per sandbox, SANDBOX_K8S_* in config.ts), SANDBOX_INSECURE_NO_GVISOR,
 * SANDBOX_MAX_CONCURRENT, SANDBOX_DATA_DIR, SANDBOX_WARM, SANDBOX_IDLE_MS, SANDBOX_MAX_SANDBOXES,
 * SANDBOX_MAX_FRAME_BYTES, SANDBOX_MAX_CALLS, SANDBOX_MEMORY_MB, SANDBOX_PIDS_MAX, LOG_LEVEL (see config.ts).
 */

import { parseArgs } from "node:util";
import { startOpsHttp } from "@gatehouse/service-kit";
import { startServiceProcessTracing, stopTracing } from "@gatehouse/telemetry";
import pino from "pino";
import { collectDefaultMetrics } from "prom-client";
import { loadConfig } from "./config.ts";
import { startSandboxRunner } from "./index.ts";

const bootLogger = pino({ level: "info" }).child({ component: "sandbox-runner" });
let config: ReturnType<typeof loadConfig>;
let insecureFlag: boolean;
try {
  const { values } = parseArgs({
    options: { "insecure-no-gvisor": { type: "boolean", default: false } },
    strict: true,
  });
  insecureFlag = values["insecure-no-gvisor"] === true;
  config = loadConfig();
} catch (error) {
  bootLogger.fatal({ event: "config_invalid" }, (error as Error).message);
  process.exit(2);
}
const logger = pino({ level: config.logLevel });
await startServiceProcessTracing("sandbox-runner", logger.child({ component: "sandbox-runner" }));
const insecureNoGvisor = insecureFlag || config.insecureNoGvisor;
logger.info(
  { component: "sandbox-runner", event: "config", config: { ...config, insecureNoGvisor } },
  "sandbox runner configuration",
);

try {
  const runner = await startSandboxRunner({
    host: config.host,
    port: config.port,
    mode: config.mode,
    insecureNoGvisor,
    logger,
    maxConcurrent: config.maxConcurrent,
    maxWaiting: config.maxWaiting,
    admissionWaitMs: config.admissionWaitMs,
    dataDir: config.dataDir,
    pool: { warm: config.warm, idleMs: config.idleMs, maxSandboxes: config.maxSandboxes },
    maxFrameBytes: config.maxFrameBytes,
    maxCalls: config.maxCalls,
    cgroups: { memoryMb: config.memoryMb, pidsMax: config.pidsMax },
    ...(config.kubernetes ? { kubernetes: { template: config.kubernetes } } : {}),
  });
  collectDefaultMetrics({ register: runner.metrics.registry });
  let serving = true;
  // If the ops listener cannot start, close the runner first: it holds sandboxes and a bundle dir.
  const health = await startOpsHttp({
    host: config.metricsHost,
    port: config.metricsPort,
    registry: runner.metrics.registry,
    healthy: () => serving,
    status: () => runner.status(),
  }).catch(async (error: unknown) => {
    await runner.close();
    throw new Error(
      `SANDBOX_RUNNER_METRICS_ADDR ${config.metricsHost}:${config.metricsPort} could not be served: ${(error as Error).message}`,
    );
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
    await stopTracing();
    process.exit(0);
  };
  process.once("SIGINT", () => void shutdown("SIGINT"));
  process.once("SIGTERM", () => void shutdown("SIGTERM"));
} catch (error) {
  logger.fatal({ component: "sandbox-runner", event: "start_failed", err: error }, (error as Error).message);
  process.exit(1);
}
