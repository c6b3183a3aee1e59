import { type ChildProcessWithoutNullStreams, spawn } from "node:child_process";
import { tmpdir } from "node:os";
import { ConfigError } from "./errors.ts";
import {
  type BundleTemplate,
  prepareBundleTemplate,
  removeBundleTemplate,
  SANDBOX_ENTRY,
} from "./gvisor/bundle.ts";
import { startContainer } from "./gvisor/container.ts";
import { findRunsc } from "./gvisor/detect.ts";

/** Requested sandbox layer: "gvisor" (required), "none" (isolate only), "auto" (gVisor when runsc is on PATH). */
export type SandboxMode = "gvisor" | "none" | "auto";

/** The warning every result carries when the gVisor layer is off. */
export const GVISOR_OFF_WARNING = "gVisor layer is OFF: runsc not found; the isolate is the only wall";
/** Same notice when gVisor was switched off by configuration rather than absent. */
export const GVISOR_DISABLED_WARNING =
  "gVisor layer is OFF: disabled by configuration (sandbox: none); the isolate is the only wall";

/** One isolate host process. */
export interface IsolateHostProcess {
  child: ChildProcessWithoutNullStreams;
  /** Kills the process (and its container) and removes its files. Idempotent; never throws. */
  destroy(): Promise<void>;
}

/** Starts isolate hosts in the resolved sandbox layer. */
export interface Launcher {
  /** The layer actually in use. */
  readonly mode: "gvisor" | "none";
  /** Warnings attached to every result (empty under gVisor). */
  readonly warnings: string[];
  launch(): Promise<IsolateHostProcess>;
  /** Releases the bundle template. */
  close(): Promise<void>;
}

/**
 * Resolves `mode` and prepares the layer.
 * @param isolateHostPath absolute path of dist/isolate-host.cjs
 * @throws ConfigError when mode is "gvisor" and runsc is not on PATH.
 */
export async function createLauncher(
  mode: SandboxMode,
  isolateHostPath: string,
  dataDir?: string,
): Promise<Launcher> {
  const runsc = mode === "none" ? null : findRunsc();
  if (mode === "gvisor" && !runsc) {
    throw new ConfigError(
      'sandbox mode "gvisor" was requested but runsc is not on PATH; install gVisor or set SANDBOX_MODE=auto|none',
    );
  }
  if (runsc) return gvisorLauncher(runsc, await prepareBundleTemplate(isolateHostPath, dataDir));
  return plainLauncher(isolateHostPath, mode === "none" ? GVISOR_DISABLED_WARNING : GVISOR_OFF_WARNING);
}

function gvisorLauncher(runsc: string, template: BundleTemplate): Launcher {
  return {
    mode: "gvisor",
    warnings: [],
    async launch() {
      const container = await startContainer(runsc, template, [
        template.nodePath,
        "--no-node-snapshot",
        SANDBOX_ENTRY,
      ]);
      return { child: container.child, destroy: container.destroy };
    },
    close: () => removeBundleTemplate(template),
  };
}

function plainLauncher(isolateHostPath: string, warning: string): Launcher {
  return {
    mode: "none",
    warnings: [warning],
    async launch() {
      // Empty environment: the isolate host inherits no secrets from the runner.
      const child = spawn(process.execPath, ["--no-node-snapshot", isolateHostPath], {
        stdio: ["pipe", "pipe", "pipe"],
        env: {},
        cwd: tmpdir(),
      });
      return {
        child,
        async destroy() {
          if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
        },
      };
    },
    close: async () => undefined,
  };
}
