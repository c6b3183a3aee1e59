/** Process configuration of the worker from environment variables, validated with zod (names the wrong variable). */
import { join } from "node:path";
import { z } from "zod";

const hostPort = z.string().regex(/^[^\s:]+:\d{1,5}$/, "expected host:port, e.g. 127.0.0.1:7233");

/** Parses "mcp=127.0.0.1:7003,git=127.0.0.1:7004" into `{ mcp: "127.0.0.1:7003", git: ... }`. @throws Error naming the bad part. */
export function parseGatekeeperAddresses(text: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of text
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [kind, address, ...rest] = part.split("=");
    if (!kind || !address || rest.length > 0 || !hostPort.safeParse(address).success) {
      throw new Error(`GATEKEEPER_ADDRESSES: "${part}" is not kind=host:port (e.g. mcp=127.0.0.1:7003)`);
    }
    out[kind] = address;
  }
  return out;
}

const EnvSchema = z.object({
  TEMPORAL_ADDRESS: hostPort,
  TEMPORAL_NAMESPACE: z.string().min(1).default("default"),
  GATEHOUSE_DATA_DIR: z.string().min(1, "set the directory holding events.sqlite"),
  GATEKEEPER_ADDRESSES: z.string().default(""),
  WORKER_METRICS_ADDR: hostPort.default("127.0.0.1:9405"),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

/** The validated configuration of `main.ts`. */
export interface WorkerConfig {
  temporalAddress: string;
  temporalNamespace: string;
  /** `$GATEHOUSE_DATA_DIR/events.sqlite`. */
  eventsPath: string;
  gatekeepers: Record<string, string>;
  metrics: { host: string; port: number };
  logLevel: string;
}

function split(addr: string): { host: string; port: number } {
  const i = addr.lastIndexOf(":");
  return { host: addr.slice(0, i), port: Number(addr.slice(i + 1)) };
}

/** @throws Error naming each wrong variable and the fix. */
export function loadConfig(env: NodeJS.ProcessEnv): WorkerConfig {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new Error(`invalid worker configuration:\n  ${lines.join("\n  ")}`);
  }
  const e = parsed.data;
  return {
    temporalAddress: e.TEMPORAL_ADDRESS,
    temporalNamespace: e.TEMPORAL_NAMESPACE,
    eventsPath: join(e.GATEHOUSE_DATA_DIR, "events.sqlite"),
    gatekeepers: parseGatekeeperAddresses(e.GATEKEEPER_ADDRESSES),
    metrics: split(e.WORKER_METRICS_ADDR),
    logLevel: e.LOG_LEVEL,
  };
}
