import { tmpdir } from "node:os";
import type { Logger } from "pino";
import {
  type BundleTemplate,
  prepareBundleTemplate,
  removeBundleTemplate,
  SANDBOX_ENTRY,
} from "../gvisor/bundle.ts";
import { type CgroupLimits, detectCgroups } from "../gvisor/cgroups.ts";
import { startContainer } from "../gvisor/container.ts";
import { reapStaleTemplates } from "../gvisor/stale.ts";
import type { SandboxBackend, SandboxInstance } from "./backend.ts";
import { childInstance } from "./child-instance.ts";

/** Options of the runsc backend. */
export interface RunscBackendOptions {
  /** Absolute path of the runsc binary. */
  runsc: string;
  /** Absolute path of dist/isolate-host.cjs on the host. */
  isolateHostPath: string;
  /** Parent dir of the bundle template (default the OS temp dir). */
  dataDir?: string;
  /** Limits to apply through cgroups when the platform allows (detected); null never uses cgroups. */
  cgroups: CgroupLimits | null;
  logger: Logger;
}

/**
 * Sandboxes as long-lived gVisor containers on this host: one `runsc run` (attached, `--network=none`,
 * bundle from ../gvisor/bundle.ts) per sandbox, running the isolate host. Detects once whether cgroups
 * are delegated here; if so every sandbox gets the memory and pids limits, else runsc gets
 * `--ignore-cgroups` and a warning is logged (event "cgroups_unavailable"). First removes the
 * templates (and any sandboxes) of runners under the same parent dir that are gone (./stale.ts).
 * @throws Error when the bundle template cannot be prepared.
 */
export async function createRunscBackend(options: RunscBackendOptions): Promise<SandboxBackend> {
  // Sandboxes of a runner that was killed die with it (tied children); its files stay until now.
  await reapStaleTemplates(options.dataDir ?? tmpdir(), options.runsc, options.logger);
  const template: BundleTemplate = await prepareBundleTemplate(options.isolateHostPath, options.dataDir);
  let cgroups: CgroupLimits | null = null;
  if (options.cgroups) {
    const support = detectCgroups();
    if (support.available) {
      cgroups = options.cgroups;
      options.logger.info(
        { event: "cgroups_on", version: support.version, ...cgroups },
        `each sandbox gets a cgroup: memory ${cgroups.memoryMb} MiB, ${cgroups.pidsMax} tasks`,
      );
    } else {
      options.logger.warn(
        { event: "cgroups_unavailable", reason: support.reason },
        `cgroups are not delegated here (${support.reason}): sandboxes run with runsc --ignore-cgroups, without memory/pids cgroup limits (isolate heap and wall-time limits still apply)`,
      );
    }
  }
  return {
    kind: "runsc",
    isolation: "gvisor",
    warnings: [],
    resourceLimits: cgroups,
    async start(): Promise<SandboxInstance> {
      const container = await startContainer(
        options.runsc,
        template,
        [template.nodePath, "--no-node-snapshot", SANDBOX_ENTRY],
        { cgroups },
      );
      const instance = childInstance(container.id, container.child, container.destroy);
      instance.setPid(null);
      // runsc writes the pid file before the isolate host starts, so it is there when the first byte
      // arrives; this listener runs before any other, so the pid is known when `{ready}` is seen.
      instance.onData(function once() {
        container.child.stdout.off("data", once);
        instance.setPid(container.sandboxPid());
      });
      return instance;
    },
    close: () => removeBundleTemplate(template),
  };
}
