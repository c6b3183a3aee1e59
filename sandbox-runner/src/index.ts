/**
 * Library entry of @gatehouse/sandbox-runner: start the SandboxRunner gRPC service in-process
 * (used by `gatehouse dev`; src/main.ts is the stand-alone process entry).
 */

import { SandboxRunnerService } from "@gatehouse/proto";
import { listenGrpc, stopGrpc } from "@gatehouse/service-kit";
import { serviceTracing } from "@gatehouse/telemetry";
import { Server } from "@grpc/grpc-js";
import pino, { type Logger } from "pino";
import type { ExecutionSettings } from "./execution.ts";
import { ensureIsolateHost } from "./isolate-host-path.ts";
import type { KubernetesBackendOptions } from "./kubernetes/backend.ts";
import { type SandboxIsolation, type SandboxMode, selectBackend } from "./layer.ts";
import { createMetrics, type RunnerMetrics } from "./metrics.ts";
import { DEFAULT_POOL_OPTIONS, type PoolOptions, type SandboxDescription } from "./pool/options.ts";
import { SandboxPool } from "./pool/pool.ts";
import { sandboxRunnerHandlers } from "./server.ts";

export { type ExecuteSnippetRequest, executeSnippet, type ServedBinding } from "./client.ts";
export type { KubernetesBackendOptions } from "./kubernetes/backend.ts";
export {
  DEFAULT_COMMAND as SANDBOX_POD_COMMAND,
  LABELS as SANDBOX_POD_LABELS,
  type SandboxPodTemplate,
  workspaceLabel,
} from "./kubernetes/template.ts";
export {
  GVISOR_DISABLED_WARNING,
  GVISOR_OFF_WARNING,
  type SandboxIsolation,
  type SandboxMode,
} from "./layer.ts";
export { DEFAULT_LIMITS, MAX_LIMITS } from "./limits.ts";
export type { SandboxBackend, SandboxExit, SandboxInstance } from "./pool/backend.ts";
export type { PoolOptions, SandboxDescription } from "./pool/options.ts";

/** Defaults of the runner-wide caps (SANDBOX_MAX_FRAME_BYTES, SANDBOX_MAX_CALLS, SANDBOX_MEMORY_MB, SANDBOX_PIDS_MAX). */
export const DEFAULT_CAPS = {
  maxFrameBytes: 1_048_576,
  maxCalls: 10_000,
  memoryMb: 2_560,
  pidsMax: 512,
} as const;

/** Options of startSandboxRunner. */
export interface SandboxRunnerOptions {
  /** Interface to bind, default "127.0.0.1". */
  host?: string;
  /** TCP port, default 0 (pick a free one; read it back from the handle). */
  port?: number;
  /** Sandbox layer, default "auto" (gVisor when runsc is on PATH). */
  mode?: SandboxMode;
  /**
   * Consent to run without gVisor (the `--insecure-no-gvisor` flag). Required for mode "none", and for
   * mode "auto" on a machine without runsc; otherwise startSandboxRunner refuses. Default false.
   */
  insecureNoGvisor?: boolean;
  /** pino logger; default a pino logger at "info". */
  logger?: Logger;
  /** Executions admitted at once, queued in their workspace's lane or running (default 16); more wait. */
  maxConcurrent?: number;
  /** Executions allowed to wait for admission (default 256); more get RESOURCE_EXHAUSTED at once. */
  maxWaiting?: number;
  /** Longest wait for admission, ms (default 20000); then RESOURCE_EXHAUSTED. */
  admissionWaitMs?: number;
  /** Parent dir for the gVisor bundle template (default the OS temp dir). */
  dataDir?: string;
  /** Pool sizing and timing (warm count, idle reaping, cap); see PoolOptions for defaults. */
  pool?: Partial<PoolOptions>;
  /** Largest capnweb message either way, bytes (default 1 MiB). */
  maxFrameBytes?: number;
  /** Most binding calls per execution (default 10000). */
  maxCalls?: number;
  /**
   * cgroup limits per gVisor sandbox, applied when the platform delegates cgroups (detected at start;
   * otherwise runsc runs with --ignore-cgroups and a warning is logged). null disables them.
   * Default {memoryMb: 2560, pidsMax: 512}.
   */
  cgroups?: { memoryMb: number; pidsMax: number } | null;
  /**
   * Mode "kubernetes": the sandbox pod template and optionally the cluster access (default in-cluster or
   * KUBECONFIG), the pod start timeout and the leftover sweep interval (see KubernetesBackendOptions).
   */
  kubernetes?: Omit<KubernetesBackendOptions, "logger" | "startFailures">;
  /** Time the isolate host gets past a deadline before its sandbox is killed, ms (default 5000). */
  graceMs?: number;
}

/** A running runner. */
export interface SandboxRunnerHandle {
  /** The bound port. */
  port: number;
  /**
   * The layer in use: "gvisor" (a runsc container per workspace), "gvisor-pod" (sandboxes are child
   * processes inside the runner's own gVisor sandbox) or "none" (isolate only; every result then carries
   * a warning).
   */
  mode: SandboxIsolation;
  /** Prometheus metrics of this runner (registry at metrics.registry). */
  metrics: RunnerMetrics;
  /** The sandbox pool: describe() lists every sandbox (id, pid, workspace, state, executions). */
  pool: Pick<SandboxPool, "describe" | "waitFor" | "whenWarm">;
  /** Status for /healthz-style pages: layer, cgroup limits in force, and every sandbox. */
  status(): {
    mode: SandboxIsolation;
    cgroups: { memoryMb: number; pidsMax: number } | null;
    sandboxes: SandboxDescription[];
  };
  /** Stops accepting calls, ends in-flight ones, destroys every sandbox, removes the bundle template. */
  close(): Promise<void>;
}

/**
 * Starts the SandboxRunner gRPC service (insecure credentials: bind it to loopback or a pod network) and
 * its sandbox pool (warm sandboxes start in the background). Builds dist/isolate-host.cjs first if missing.
 * @throws ConfigError when the layer is refused (mode "gvisor" without runsc; mode "gvisor-pod" when the
 *   runner's kernel is not gVisor's; no runsc, or mode "none", without insecureNoGvisor); Error when the
 *   port cannot be bound.
 */
export async function startSandboxRunner(options: SandboxRunnerOptions = {}): Promise<SandboxRunnerHandle> {
  const logger = (options.logger ?? pino({ level: "info" })).child({ component: "sandbox-runner" });
  const isolateHost = await ensureIsolateHost();
  const cgroups =
    options.cgroups === undefined
      ? { memoryMb: DEFAULT_CAPS.memoryMb, pidsMax: DEFAULT_CAPS.pidsMax }
      : options.cgroups;
  const metrics = createMetrics();
  // Tracing (off unless the process started it): each Execute stream is a SERVER span in the caller's trace.
  const tracing = serviceTracing("sandbox-runner");
  tracing.countDroppedSpansOn(metrics.registry);
  const backend = await selectBackend({
    mode: options.mode ?? "auto",
    insecureNoGvisor: options.insecureNoGvisor ?? false,
    isolateHostPath: isolateHost,
    dataDir: options.dataDir,
    cgroups,
    ...(options.kubernetes
      ? { kubernetes: { ...options.kubernetes, startFailures: metrics.startFailures } }
      : {}),
    logger,
  });
  const cgroupsInForce = backend.resourceLimits;
  if (backend.isolation === "none") {
    logger.warn({ event: "gvisor_off", warning: backend.warnings[0] }, `!!! ${backend.warnings[0]} !!!`);
  } else if (backend.isolation === "gvisor-pod") {
    logger.info(
      { event: "gvisor_pod" },
      "gVisor layer is ON at the pod: the runner runs under gVisor and its sandboxes are child processes inside it, shared by this runner's workspaces",
    );
  } else {
    logger.info(
      { event: "gvisor_on", cgroups: cgroupsInForce },
      "gVisor layer is ON: each workspace gets its own runsc container",
    );
  }
  const poolOptions: PoolOptions = {
    ...DEFAULT_POOL_OPTIONS,
    // A pod start has its own timeout (whose message names Kubernetes' reason): the pool waits past it.
    ...(options.kubernetes ? { readyTimeoutMs: (options.kubernetes.startTimeoutMs ?? 60_000) + 30_000 } : {}),
    ...options.pool,
  };
  const pool = new SandboxPool(backend, poolOptions, logger, metrics);
  pool.start();
  const settings: ExecutionSettings = {
    caps: {
      maxFrameBytes: options.maxFrameBytes ?? DEFAULT_CAPS.maxFrameBytes,
      maxCalls: options.maxCalls ?? DEFAULT_CAPS.maxCalls,
    },
    warnings: backend.warnings,
    graceMs: options.graceMs ?? 5_000,
  };
  const server = new Server();
  const runner = sandboxRunnerHandlers({
    pool,
    isolation: backend.isolation,
    settings,
    logger,
    metrics,
    maxConcurrent: options.maxConcurrent ?? 16,
    maxWaiting: options.maxWaiting ?? 256,
    admissionWaitMs: options.admissionWaitMs ?? 20_000,
  });
  server.addService(SandboxRunnerService, tracing.traceGrpcService(SandboxRunnerService, runner.handlers));
  const host = options.host ?? "127.0.0.1";
  const shutdown = async () => {
    await pool.close();
    await backend.close();
  };
  let port: number;
  try {
    port = await listenGrpc(server, host, options.port ?? 0);
  } catch (error) {
    await shutdown();
    throw error;
  }
  logger.info(
    { event: "listening", host, port, mode: backend.isolation, pool: poolOptions, caps: settings.caps },
    "sandbox runner listening",
  );
  return {
    port,
    mode: backend.isolation,
    metrics,
    pool,
    status: () => ({ mode: backend.isolation, cgroups: cgroupsInForce, sandboxes: pool.describe() }),
    async close() {
      await stopGrpc(server);
      await runner.drain();
      await shutdown();
    },
  };
}
