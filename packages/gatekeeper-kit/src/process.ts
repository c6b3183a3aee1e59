/**
 * The process entry every gatekeeper's `main.ts` shares: validate the environment (zod), make the
 * pino logger, start tracing, start the gatekeeper, serve `/metrics` and `/healthz`, log the
 * configuration once, and stop in order on SIGTERM/SIGINT (gatekeeper, ops endpoint, tracing).
 *
 * Every gatekeeper reads `<PREFIX>_ADDR` (gRPC host:port), `<PREFIX>_METRICS_ADDR` (ops
 * host:port), `APPROVAL_ADDRESS` (required) and `LOG_LEVEL` (pino level, default info); the
 * gatekeeper adds its own variables in `env`.
 *
 * Exit codes: 2 for a configuration error (a bad variable, or `ConfigurationRefused` thrown by
 * `start`, printed as `<name>: <message>`), 1 for any other start-up failure.
 *
 * ```ts
 * runGatekeeperProcess({
 *   name: "gatekeeper-git", envPrefix: "GATEKEEPER_GIT", addr: "127.0.0.1:7004", metricsAddr: "127.0.0.1:9404",
 *   env: { GATEKEEPER_GIT_ALLOWED_ROOTS: z.string().min(1) },
 *   async start(env, base) { return { gatekeeper: await startGitGatekeeper({ ...base, ... }), config: { ... } }; },
 * });
 * ```
 */
import {
  hostPort,
  InvalidConfiguration,
  parseEnv,
  splitHostPort,
  startOpsHttp,
  stopOnSignals,
} from "@gatehouse/service-kit";
import { startServiceProcessTracing, stopTracing } from "@gatehouse/telemetry";
import { pino } from "pino";
import { z } from "zod";
import { DEFAULT_MAX_FRAME_BYTES, MAX_MAX_FRAME_BYTES, MIN_MAX_FRAME_BYTES } from "./frame-budget.ts";
import type { GatekeeperAddress, RunningGatekeeper } from "./start.ts";

/** What every gatekeeper's start gets from the common variables (and the logger). */
export type ProcessBase = GatekeeperAddress;

/**
 * The `SANDBOX_MAX_FRAME_BYTES` variable of a gatekeeper that sizes its replies: the sandbox
 * runners' frame cap in bytes (default DEFAULT_MAX_FRAME_BYTES, as theirs; between
 * MIN_MAX_FRAME_BYTES and MAX_MAX_FRAME_BYTES). Set it to the runners' value.
 */
export const sandboxMaxFrameBytes = z.coerce
  .number()
  .int()
  .min(MIN_MAX_FRAME_BYTES)
  .max(MAX_MAX_FRAME_BYTES)
  .default(DEFAULT_MAX_FRAME_BYTES);

/** A gatekeeper's process: its name, variables and how it starts. */
export interface GatekeeperProcessSpec<S extends z.ZodRawShape> {
  /** The service's name, e.g. "gatekeeper-git" (logs, spans, error lines). */
  name: string;
  /** Prefix of the address variables, e.g. "GATEKEEPER_GIT" (→ GATEKEEPER_GIT_ADDR, GATEKEEPER_GIT_METRICS_ADDR). */
  envPrefix: string;
  /** Default gRPC address, e.g. "127.0.0.1:7004". */
  addr: string;
  /** Default ops (/metrics, /healthz) address, e.g. "127.0.0.1:9404". */
  metricsAddr: string;
  /** The gatekeeper's own variables. */
  env: S;
  /**
   * Starts the gatekeeper. `config` is added to the one `config` log line (never secrets).
   * @throws ConfigurationRefused for a configuration it refuses (exit 2).
   */
  start(
    env: z.output<z.ZodObject<S>>,
    base: ProcessBase,
  ): Promise<{ gatekeeper: RunningGatekeeper; config: Record<string, unknown> }>;
}

/**
 * A configuration `start` refuses (e.g. a registry file that does not parse): printed as
 * `<service>: <message>`, exit code 2.
 */
export class ConfigurationRefused extends Error {
  override name = "ConfigurationRefused";
}

/** Runs the process (see module doc); never returns an error: it exits the process on failure. */
export function runGatekeeperProcess<S extends z.ZodRawShape>(spec: GatekeeperProcessSpec<S>): void {
  main(spec).catch((err: unknown) => {
    if (err instanceof InvalidConfiguration) {
      console.error(err.message);
      process.exit(2);
    }
    if (err instanceof ConfigurationRefused) {
      console.error(`${spec.name}: ${err.message}`);
      process.exit(2);
    }
    console.error(`${spec.name} failed to start: ${(err as Error).message}`);
    process.exit(1);
  });
}

async function main<S extends z.ZodRawShape>(spec: GatekeeperProcessSpec<S>): Promise<void> {
  const HostPort = hostPort(spec.addr);
  const addrVar = `${spec.envPrefix}_ADDR`;
  const metricsVar = `${spec.envPrefix}_METRICS_ADDR`;
  const Env = z.object({
    [addrVar]: HostPort.default(spec.addr),
    APPROVAL_ADDRESS: HostPort,
    ...spec.env,
    [metricsVar]: HostPort.default(spec.metricsAddr),
    LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
  });
  const env = parseEnv(Env, process.env, spec.name) as Record<string, string> & z.output<z.ZodObject<S>>;
  const logger = pino({ level: env.LOG_LEVEL, base: { service: spec.name } });
  await startServiceProcessTracing(spec.name, logger);
  const { host, port } = splitHostPort(env[addrVar] as string);
  const approvalAddress = env.APPROVAL_ADDRESS as string;
  const { gatekeeper: gk, config } = await spec.start(env, { approvalAddress, host, port, logger });
  const ops = splitHostPort(env[metricsVar] as string);
  const http = await startOpsHttp({ ...ops, registry: gk.metrics.registry, healthy: gk.healthy });
  logger.info(
    {
      event: "config",
      grpc: `${host}:${gk.port}`,
      approval: approvalAddress,
      ...config,
      ops: `${ops.host}:${http.port}`,
    },
    `${spec.name} configured`,
  );
  stopOnSignals(
    logger,
    () => gk.close(),
    () => http.close(),
    () => stopTracing(),
  );
}
