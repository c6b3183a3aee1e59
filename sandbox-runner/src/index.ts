/**
 * Library entry of @gatehouse/sandbox-runner: start the SandboxRunner gRPC service in-process
 * (used by `gatehouse dev`; src/main.ts is the stand-alone process entry).
 */

import { SandboxRunnerService } from "@gatehouse/proto";
import { listenGrpc, stopGrpc } from "@gatehouse/service-kit";
import { Server } from "@grpc/grpc-js";
import pino, { type Logger } from "pino";
import { ensureIsolateHost } from "./isolate-host-path.ts";
import { createLauncher, type SandboxMode } from "./launcher.ts";
import { createMetrics, type RunnerMetrics } from "./metrics.ts";
import { sandboxRunnerHandlers } from "./server.ts";

export { benchSandboxRunner, type SandboxBenchResult } from "./bench.ts";
export { type ExecuteSnippetRequest, executeSnippet, type ServedBinding } from "./client.ts";
export { GVISOR_DISABLED_WARNING, GVISOR_OFF_WARNING, type SandboxMode } from "./launcher.ts";
export { DEFAULT_LIMITS, MAX_LIMITS } from "./limits.ts";

/** Options of startSandboxRunner. */
export interface SandboxRunnerOptions {
  /** Interface to bind, default "127.0.0.1". */
  host?: string;
  /** TCP port, default 0 (pick a free one; read it back from the handle). */
  port?: number;
  /** Sandbox layer, default "auto" (gVisor when runsc is on PATH). */
  mode?: SandboxMode;
  /** pino logger; default a pino logger at "info". */
  logger?: Logger;
  /** Executions allowed at once (default 16). */
  maxConcurrent?: number;
  /** Parent dir for the gVisor bundle template (default the OS temp dir). */
  dataDir?: string;
}

/** A running runner. */
export interface SandboxRunnerHandle {
  /** The bound port. */
  port: number;
  /** The layer in use: "gvisor" or "none" (isolate only; every result then carries a warning). */
  mode: "gvisor" | "none";
  /** Prometheus metrics of this runner (registry at metrics.registry). */
  metrics: RunnerMetrics;
  /** Stops accepting calls, ends in-flight ones, removes the bundle template. */
  close(): Promise<void>;
}

/**
 * Starts the SandboxRunner gRPC service (insecure credentials: bind it to loopback or a pod network).
 * Builds dist/isolate-host.cjs first if it is missing.
 * @throws ConfigError when mode "gvisor" is requested without runsc; Error when the port cannot be bound.
 */
export async function startSandboxRunner(options: SandboxRunnerOptions = {}): Promise<SandboxRunnerHandle> {
  const logger = (options.logger ?? pino({ level: "info" })).child({ component: "sandbox-runner" });
  const isolateHost = await ensureIsolateHost();
  const launcher = await createLauncher(options.mode ?? "auto", isolateHost, options.dataDir);
  if (launcher.mode === "none") {
    logger.warn({ event: "gvisor_off", warning: launcher.warnings[0] }, `!!! ${launcher.warnings[0]} !!!`);
  } else {
    logger.info({ event: "gvisor_on" }, "gVisor layer is ON: each execution runs in its own runsc container");
  }
  const metrics = createMetrics();
  const server = new Server();
  const runner = sandboxRunnerHandlers({
    launcher,
    logger,
    metrics,
    maxConcurrent: options.maxConcurrent ?? 16,
  });
  server.addService(SandboxRunnerService, runner.handlers);
  const host = options.host ?? "127.0.0.1";
  let port: number;
  try {
    port = await listenGrpc(server, host, options.port ?? 0);
  } catch (error) {
    await launcher.close();
    throw error;
  }
  logger.info({ event: "listening", host, port, mode: launcher.mode }, "sandbox runner listening");
  return {
    port,
    mode: launcher.mode,
    metrics,
    async close() {
      await stopGrpc(server);
      await runner.drain();
      await launcher.close();
    },
  };
}
