/** Process configuration from environment variables, validated with zod (names the wrong variable). */
import { join } from "node:path";
import { z } from "zod";

const hostPort = z.string().regex(/^[^\s:]+:\d{1,5}$/, "expected host:port, e.g. 127.0.0.1:7002");

/** Parses "mcp=127.0.0.1:7003,git=127.0.0.1:7004" into `{ mcp: "127.0.0.1:7003", git: ... }`. */
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
  APPROVAL_ADDR: hostPort.default("127.0.0.1:7002"),
  GATEHOUSE_DATA_DIR: z.string().min(1, "set the directory holding events.sqlite"),
  GATEHOUSE_CALLER_TOKEN_SECRET: z
    .string()
    .refine((s) => Buffer.byteLength(s) >= 32, "must be at least 32 bytes"),
  GATEKEEPER_ADDRESSES: z.string().default(""),
  METRICS_ADDR: hostPort.optional(),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

/** The validated configuration of `main.ts`. */
export interface ApprovalConfig {
  host: string;
  port: number;
  eventsPath: string;
  callerTokenSecret: string;
  gatekeepers: Record<string, string>;
  metrics: { host: string; port: number } | undefined;
  logLevel: string;
}

function split(addr: string): { host: string; port: number } {
  const i = addr.lastIndexOf(":");
  return { host: addr.slice(0, i), port: Number(addr.slice(i + 1)) };
}

/** @throws Error naming each wrong variable and the fix. */
export function loadConfig(env: NodeJS.ProcessEnv): ApprovalConfig {
  const parsed = EnvSchema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`);
    throw new Error(`invalid approval configuration:\n  ${lines.join("\n  ")}`);
  }
  const e = parsed.data;
  const { host, port } = split(e.APPROVAL_ADDR);
  return {
    host,
    port,
    eventsPath: join(e.GATEHOUSE_DATA_DIR, "events.sqlite"),
    callerTokenSecret: e.GATEHOUSE_CALLER_TOKEN_SECRET,
    gatekeepers: parseGatekeeperAddresses(e.GATEKEEPER_ADDRESSES),
    metrics: e.METRICS_ADDR ? split(e.METRICS_ADDR) : undefined,
    logLevel: e.LOG_LEVEL,
  };
}
