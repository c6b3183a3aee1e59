import { z } from "zod";
import { ConfigError } from "./errors.ts";

const address = z.string().regex(/^[^:\s]+:\d{1,5}$/, "expected host:port, e.g. 127.0.0.1:7004");

const schema = z.object({
  SANDBOX_RUNNER_ADDR: address.default("127.0.0.1:7004"),
  SANDBOX_RUNNER_METRICS_ADDR: address.default("127.0.0.1:9474"),
  SANDBOX_MODE: z.enum(["gvisor", "none", "auto"]).default("auto"),
  SANDBOX_MAX_CONCURRENT: z.coerce.number().int().min(1).max(1024).default(16),
  SANDBOX_DATA_DIR: z.string().min(1).optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

/** Validated process configuration of the runner (from environment variables). */
export interface RunnerConfig {
  /** gRPC listen address, host:port (SANDBOX_RUNNER_ADDR, default 127.0.0.1:7004). */
  host: string;
  port: number;
  /** HTTP address for /healthz and /metrics (SANDBOX_RUNNER_METRICS_ADDR, default 127.0.0.1:9474). */
  metricsHost: string;
  metricsPort: number;
  /** SANDBOX_MODE: gvisor | none | auto (default auto). */
  mode: "gvisor" | "none" | "auto";
  /** SANDBOX_MAX_CONCURRENT (default 16). */
  maxConcurrent: number;
  /** SANDBOX_DATA_DIR: parent of the gVisor bundle template (default OS temp dir). */
  dataDir: string | undefined;
  /** LOG_LEVEL (default info). */
  logLevel: string;
}

function split(addr: string): [string, number] {
  const i = addr.lastIndexOf(":");
  return [addr.slice(0, i), Number(addr.slice(i + 1))];
}

/**
 * Reads and validates the configuration.
 * @throws ConfigError naming the variable that is wrong and what is expected.
 */
export function loadConfig(env: NodeJS.ProcessEnv = process.env): RunnerConfig {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new ConfigError(`environment variable ${String(issue.path[0])} is invalid: ${issue.message}`);
  }
  const c = parsed.data;
  const [host, port] = split(c.SANDBOX_RUNNER_ADDR);
  const [metricsHost, metricsPort] = split(c.SANDBOX_RUNNER_METRICS_ADDR);
  return {
    host,
    port,
    metricsHost,
    metricsPort,
    mode: c.SANDBOX_MODE,
    maxConcurrent: c.SANDBOX_MAX_CONCURRENT,
    dataDir: c.SANDBOX_DATA_DIR,
    logLevel: c.LOG_LEVEL,
  };
}
