import type { Logger } from "pino";
import { ConfigError } from "./errors.ts";
import type { CgroupLimits } from "./gvisor/cgroups.ts";
import { findRunsc } from "./gvisor/detect.ts";
import { readKernel } from "./gvisor/kernel.ts";
import { createKubernetesBackend, type KubernetesBackendOptions } from "./kubernetes/backend.ts";
import type { SandboxBackend } from "./pool/backend.ts";
import { createProcessBackend } from "./pool/process-backend.ts";
import { createRunscBackend } from "./pool/runsc-backend.ts";

/**
 * Requested sandbox layer: "gvisor" (a runsc container per sandbox, required), "gvisor-pod" (the runner
 * itself runs under gVisor, e.g. a Pod of RuntimeClass gvisor: sandboxes are child processes inside it;
 * verified at start), "none" (isolate only), "auto" (gvisor-pod when the runner's kernel is gVisor's,
 * else gvisor when runsc is on PATH), "kubernetes" (a pod of a gVisor RuntimeClass per sandbox, made
 * through the Kubernetes API; see ./kubernetes/backend.ts).
 */
export type SandboxMode = "gvisor" | "gvisor-pod" | "kubernetes" | "none" | "auto";

/** The layer in force, which the backend selectBackend returns provides (defined next to SandboxBackend). */
export type { SandboxIsolation } from "./pool/backend.ts";

/** The warning every result carries when runsc is absent and the operator accepted that. */
export const GVISOR_OFF_WARNING =
  "gVisor layer is OFF: runsc not found (--insecure-no-gvisor); the isolate is the only wall";
/** Same notice when gVisor was switched off by configuration rather than absent. */
export const GVISOR_DISABLED_WARNING =
  "gVisor layer is OFF: disabled by configuration (sandbox: none, --insecure-no-gvisor); the isolate is the only wall";

/** What selectBackend needs. */
export interface LayerOptions {
  mode: SandboxMode;
  /**
   * The operator's explicit consent to run without gVisor (`--insecure-no-gvisor`,
   * SANDBOX_INSECURE_NO_GVISOR=1). Required for mode "none", and for mode "auto" when runsc is absent.
   */
  insecureNoGvisor: boolean;
  /** Absolute path of dist/isolate-host.cjs. */
  isolateHostPath: string;
  /** Parent dir of the gVisor bundle template. */
  dataDir?: string;
  /** Where the runner reads its kernel's identity (default /proc/version; tests point it at a fixture). */
  procVersionPath?: string;
  /** Cgroup limits for gVisor sandboxes (applied when the platform delegates cgroups), or null for none. */
  cgroups: CgroupLimits | null;
  /** Mode "kubernetes": the backend's options (template, cluster access); required in that mode. */
  kubernetes?: Omit<KubernetesBackendOptions, "logger">;
  logger: Logger;
}

/**
 * Resolves the sandbox layer and creates its backend:
 *
 * | mode       | kernel is gVisor's | runsc on PATH | insecureNoGvisor | result                                         |
 * | ---------- | ------------------ | ------------- | ---------------- | ---------------------------------------------- |
 * | gvisor-pod | yes                | any           | any              | process backend, isolation "gvisor-pod"        |
 * | gvisor-pod | no                 | any           | any              | refuses (ConfigError): never claims gVisor     |
 * | gvisor     | any                | yes           | any              | runsc backend                                  |
 * | gvisor     | any                | no            | any              | refuses (ConfigError)                          |
 * | auto       | yes                | any           | any              | process backend, isolation "gvisor-pod"        |
 * | auto       | no                 | yes           | any              | runsc backend                                  |
 * | auto       | no                 | no            | false            | refuses (ConfigError)                          |
 * | auto       | no                 | no            | true             | process backend, GVISOR_OFF_WARNING on results |
 * | none       | any                | any           | false            | refuses (ConfigError)                          |
 * | none       | any                | any           | true             | process backend, GVISOR_DISABLED_WARNING       |
 *
 * The kernel is gVisor's when /proc/version is gVisor's (gvisor/kernel.ts): under gVisor that file is
 * the Sentry's answer, not the host's, so a runner outside gVisor cannot be made to claim it by configuration.
 *
 * @throws ConfigError naming the flag/variable to change when the combination is refused.
 */
export async function selectBackend(options: LayerOptions): Promise<SandboxBackend> {
  const { mode, insecureNoGvisor } = options;
  if (mode === "kubernetes") {
    if (!options.kubernetes)
      throw new ConfigError(
        'sandbox mode "kubernetes" needs the sandbox pod template (SANDBOX_K8S_NAMESPACE, SANDBOX_K8S_IMAGE)',
      );
    return createKubernetesBackend({ ...options.kubernetes, logger: options.logger });
  }
  if (mode === "none") {
    if (!insecureNoGvisor) {
      throw new ConfigError(
        'sandbox mode "none" turns gVisor off, leaving the isolate as the only wall; confirm with --insecure-no-gvisor (or SANDBOX_INSECURE_NO_GVISOR=1), or use SANDBOX_MODE=auto|gvisor',
      );
    }
    return createProcessBackend(options.isolateHostPath, {
      isolation: "none",
      warning: GVISOR_DISABLED_WARNING,
    });
  }
  const kernel = readKernel(options.procVersionPath);
  if (mode === "gvisor-pod" && !kernel.gvisor) {
    throw new ConfigError(
      `SANDBOX_MODE=gvisor-pod says the runner itself runs under gVisor, but its kernel is not gVisor's (/proc/version: ${JSON.stringify(kernel.procVersion || "unreadable")}); run its Pod with runtimeClassName: gvisor (a RuntimeClass whose handler is runsc), or set SANDBOX_MODE=auto|gvisor`,
    );
  }
  if (mode === "gvisor-pod" || (mode === "auto" && kernel.gvisor)) {
    return createProcessBackend(options.isolateHostPath, { isolation: "gvisor-pod" });
  }
  const runsc = findRunsc();
  if (!runsc) {
    if (mode === "gvisor") {
      throw new ConfigError(
        'sandbox mode "gvisor" was requested but runsc is not on PATH; install gVisor (npm run setup) or set SANDBOX_MODE=auto|none',
      );
    }
    if (!insecureNoGvisor) {
      throw new ConfigError(
        "runsc (gVisor) is not on PATH, so snippets would run with the isolate as the only wall; install gVisor (npm run setup), or start with --insecure-no-gvisor (SANDBOX_INSECURE_NO_GVISOR=1) to accept that",
      );
    }
    return createProcessBackend(options.isolateHostPath, { isolation: "none", warning: GVISOR_OFF_WARNING });
  }
  return createRunscBackend({
    runsc,
    isolateHostPath: options.isolateHostPath,
    dataDir: options.dataDir,
    cgroups: options.cgroups,
    logger: options.logger,
  });
}
