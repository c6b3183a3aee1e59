import type { Logger } from "pino";
import { ConfigError } from "./errors.ts";
import type { CgroupLimits } from "./gvisor/cgroups.ts";
import { findRunsc } from "./gvisor/detect.ts";
import type { SandboxBackend } from "./pool/backend.ts";
import { createProcessBackend } from "./pool/process-backend.ts";
import { createRunscBackend } from "./pool/runsc-backend.ts";

/** Requested sandbox layer: "gvisor" (required), "none" (isolate only), "auto" (gVisor when runsc is on PATH). */
export type SandboxMode = "gvisor" | "none" | "auto";

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
  /** Cgroup limits for gVisor sandboxes (applied when the platform delegates cgroups), or null for none. */
  cgroups: CgroupLimits | null;
  logger: Logger;
}

/**
 * Resolves the sandbox layer and creates its backend:
 *
 * | mode   | runsc on PATH | insecureNoGvisor | result                                        |
 * | ------ | ------------- | ---------------- | --------------------------------------------- |
 * | gvisor | yes           | any              | runsc backend                                 |
 * | gvisor | no            | any              | refuses (ConfigError)                         |
 * | auto   | yes           | any              | runsc backend                                 |
 * | auto   | no            | false            | refuses (ConfigError)                         |
 * | auto   | no            | true             | process backend, GVISOR_OFF_WARNING on results |
 * | none   | any           | false            | refuses (ConfigError)                         |
 * | none   | any           | true             | process backend, GVISOR_DISABLED_WARNING      |
 *
 * @throws ConfigError naming the flag/variable to change when the combination is refused.
 */
export async function selectBackend(options: LayerOptions): Promise<SandboxBackend> {
  const { mode, insecureNoGvisor } = options;
  if (mode === "none") {
    if (!insecureNoGvisor) {
      throw new ConfigError(
        'sandbox mode "none" turns gVisor off, leaving the isolate as the only wall; confirm with --insecure-no-gvisor (or SANDBOX_INSECURE_NO_GVISOR=1), or use SANDBOX_MODE=auto|gvisor',
      );
    }
    return createProcessBackend(options.isolateHostPath, GVISOR_DISABLED_WARNING);
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
    return createProcessBackend(options.isolateHostPath, GVISOR_OFF_WARNING);
  }
  return createRunscBackend({
    runsc,
    isolateHostPath: options.isolateHostPath,
    dataDir: options.dataDir,
    cgroups: options.cgroups,
    logger: options.logger,
  });
}
