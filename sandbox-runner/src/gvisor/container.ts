import { type ChildProcessWithoutNullStreams, execFile } from "node:child_process";
import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { rm } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { spawnTiedToParent } from "@gatehouse/service-kit";
import { type BundleTemplate, type ContainerOptions, writeContainerBundle } from "./bundle.ts";
import { removeSandboxCgroupsSettled } from "./cgroups.ts";

const execFileAsync = promisify(execFile);

/** A running gVisor container whose process stdio is piped to us. */
export interface Container {
  /** The container id (also the name of its bundle dir). */
  id: string;
  /** The `runsc run` process; its stdin/stdout/stderr are the container process's. */
  child: ChildProcessWithoutNullStreams;
  /**
   * Host pid of the sandbox process (`runsc-sandbox`; killing it kills the container), read from the pid
   * file runsc writes before the container process starts. Null when it cannot be read (yet).
   */
  sandboxPid(): number | null;
  /** Force-deletes the container (`runsc delete -force`) and its bundle dir. Idempotent; never throws. */
  destroy(): Promise<void>;
}

/**
 * Global runsc flags used for every call: our own state root and no network stack at all. Without
 * cgroup limits runsc is told to skip cgroup setup (`--ignore-cgroups`, for hosts that do not delegate
 * cgroups). Platform stays the default (ptrace).
 */
export function runscGlobalFlags(template: BundleTemplate, withCgroups = false): string[] {
  const flags = [`--root=${template.stateDir}`, "--network=none"];
  if (!withCgroups) flags.push("--ignore-cgroups");
  return flags;
}

/**
 * Starts `args` inside a new gVisor container (`runsc run`, attached) built from `template`.
 * @throws Error when the bundle cannot be written; spawn errors surface as the child's "error" event.
 */
export async function startContainer(
  runsc: string,
  template: BundleTemplate,
  args: string[],
  options: ContainerOptions = {},
): Promise<Container> {
  const id = `gh-${randomBytes(8).toString("hex")}`;
  const withCgroups = Boolean(options.cgroups);
  const flags = runscGlobalFlags(template, withCgroups);
  const bundle = await writeContainerBundle(template, id, args, options);
  const pidFile = join(bundle, "sandbox.pid");
  // Tied to this process: if it dies (even by SIGKILL), `runsc run` is killed, and runsc's attached
  // sandbox and gofer die with it.
  const child = spawnTiedToParent(runsc, [...flags, "run", "--pid-file", pidFile, "--bundle", bundle, id], {
    stdio: ["pipe", "pipe", "pipe"],
    env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" },
  }) as ChildProcessWithoutNullStreams;
  let destroyed: Promise<void> | null = null;
  const destroy = (): Promise<void> => {
    destroyed ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await execFileAsync(runsc, [...flags, "delete", "-force", id]).catch(() => undefined);
      // If `runsc run` itself was killed, the sandbox process may outlive it: stop it too, so its
      // cgroups empty and can be removed.
      const orphan = sandboxPid();
      // Only a process that is still runsc's (a pid can be reused once its sandbox exited).
      if (orphan !== null && isRunsc(orphan)) {
        try {
          process.kill(orphan, "SIGKILL");
        } catch {
          // already gone
        }
      }
      if (withCgroups) await removeSandboxCgroupsSettled(id);
      await rm(bundle, { recursive: true, force: true }).catch(() => undefined);
    })();
    return destroyed;
  };
  const sandboxPid = () => {
    let text = "";
    try {
      text = readFileSync(pidFile, "utf8");
    } catch {
      // not written (yet)
    }
    const pid = Number.parseInt(text, 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  };
  return { id, child, sandboxPid, destroy };
}

/** True when `pid` is a live runsc process (its command line names runsc). */
function isRunsc(pid: number): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes("runsc");
  } catch {
    return false;
  }
}
