import { type ChildProcessWithoutNullStreams, execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { rm } from "node:fs/promises";
import { promisify } from "node:util";
import { type BundleTemplate, writeContainerBundle } from "./bundle.ts";

const execFileAsync = promisify(execFile);

/** A running gVisor container whose process stdio is piped to us. */
export interface Container {
  /** The container id (also the name of its bundle dir). */
  id: string;
  /** The `runsc run` process; its stdin/stdout/stderr are the container process's. */
  child: ChildProcessWithoutNullStreams;
  /** Force-deletes the container (`runsc delete -force`) and its bundle dir. Idempotent; never throws. */
  destroy(): Promise<void>;
}

/**
 * Global runsc flags used for every call: our own state root, no network stack at all, and no cgroup
 * setup (cgroups are unavailable / not delegated here). Platform stays the default (ptrace).
 */
export function runscGlobalFlags(template: BundleTemplate): string[] {
  return [`--root=${template.stateDir}`, "--network=none", "--ignore-cgroups"];
}

/**
 * Starts `args` inside a new gVisor container (`runsc run`, attached) built from `template`.
 * @throws Error when the bundle cannot be written; spawn errors surface as the child's "error" event.
 */
export async function startContainer(
  runsc: string,
  template: BundleTemplate,
  args: string[],
): Promise<Container> {
  const id = `gh-${randomBytes(8).toString("hex")}`;
  const bundle = await writeContainerBundle(template, id, args);
  const child = spawn(runsc, [...runscGlobalFlags(template), "run", "--bundle", bundle, id], {
    stdio: ["pipe", "pipe", "pipe"],
    env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" },
  });
  let destroyed: Promise<void> | null = null;
  const destroy = (): Promise<void> => {
    destroyed ??= (async () => {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await execFileAsync(runsc, [...runscGlobalFlags(template), "delete", "-force", id]).catch(
        () => undefined,
      );
      await rm(bundle, { recursive: true, force: true }).catch(() => undefined);
    })();
    return destroyed;
  };
  return { id, child, destroy };
}
