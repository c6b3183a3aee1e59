import { existsSync, mkdirSync, readFileSync, rmdirSync } from "node:fs";
import { join } from "node:path";

/** Memory and pids limits applied to each sandbox through its cgroup. */
export interface CgroupLimits {
  /** memory limit of the whole sandbox (gVisor's kernel, the isolate host and its isolates), MiB. */
  memoryMb: number;
  /** Most host tasks (processes + threads, gVisor's own included) the sandbox may have. */
  pidsMax: number;
}

/** Whether runsc can put sandboxes into cgroups with memory and pids limits here. */
export interface CgroupSupport {
  available: boolean;
  /** "v1" or "v2" when available. */
  version: "v1" | "v2" | null;
  /** Why not, when not available (for the start-up log line). */
  reason: string;
}

/** Parent of every sandbox cgroup, relative to the runner's own cgroup (runsc resolves relative paths so). */
export const CGROUP_PARENT = "gatehouse-sandbox";
const ROOT = "/sys/fs/cgroup";

interface OwnCgroup {
  /** "memory", "pids", "cpu,cpuacct", "name=systemd", "" for the v2 line. */
  controllers: string;
  path: string;
}

function ownCgroups(): OwnCgroup[] {
  let text: string;
  try {
    text = readFileSync("/proc/self/cgroup", "utf8");
  } catch {
    return [];
  }
  return text
    .split("\n")
    .filter((line) => line.length > 0)
    .map((line) => {
      const [, controllers = "", path = "/"] = line.split(":");
      return { controllers, path };
    });
}

/** The cgroup file-system directory that holds this process for a v1 controller, or null. */
function v1Dir(controller: string): string | null {
  const own = ownCgroups().find((c) => c.controllers.split(",").includes(controller));
  if (!own) return null;
  for (const mount of [controller, own.controllers]) {
    const dir = join(ROOT, mount, own.path);
    if (existsSync(dir)) return dir;
  }
  return null;
}

function canCreateChild(dir: string): string | null {
  const probe = join(dir, `gatehouse-probe-${process.pid}`);
  try {
    mkdirSync(probe);
    rmdirSync(probe);
    return null;
  } catch (error) {
    return `cannot create a cgroup under ${dir} (${(error as NodeJS.ErrnoException).code ?? "error"})`;
  }
}

/**
 * Detects whether sandboxes can get memory and pids cgroup limits: cgroup v1 with writable `memory` and
 * `pids` hierarchies at this process's own cgroups, or cgroup v2 whose own cgroup delegates `memory` and
 * `pids` to children. Probes by creating and removing an empty child cgroup; changes nothing else.
 */
export function detectCgroups(): CgroupSupport {
  if (existsSync(join(ROOT, "cgroup.controllers"))) {
    const own = ownCgroups().find((c) => c.controllers === "");
    const dir = join(ROOT, own?.path ?? "/");
    let delegated: string[] = [];
    try {
      delegated = readFileSync(join(dir, "cgroup.subtree_control"), "utf8").trim().split(/\s+/);
    } catch {
      // unreadable: not delegated
    }
    if (!delegated.includes("memory") || !delegated.includes("pids")) {
      return {
        available: false,
        version: null,
        reason: `cgroup v2: ${dir} does not delegate the memory and pids controllers`,
      };
    }
    const problem = canCreateChild(dir);
    return problem
      ? { available: false, version: null, reason: `cgroup v2: ${problem}` }
      : { available: true, version: "v2", reason: "" };
  }
  for (const controller of ["memory", "pids"]) {
    const dir = v1Dir(controller);
    if (!dir)
      return { available: false, version: null, reason: `no cgroup v1 ${controller} hierarchy mounted` };
    const problem = canCreateChild(dir);
    if (problem) return { available: false, version: null, reason: `cgroup v1: ${problem}` };
  }
  return { available: true, version: "v1", reason: "" };
}

/**
 * Removes the (empty) cgroup directories of one sandbox in every hierarchy, best effort. `runsc delete`
 * normally does this; a sandbox whose start failed, or whose `runsc run` was killed, can leave them.
 * @returns how many directories were still busy (processes in them), to retry.
 */
export function removeSandboxCgroups(containerId: string): number {
  let busy = 0;
  for (const own of ownCgroups()) {
    const mount = own.controllers === "" ? "" : own.controllers.replace(/^name=/, "");
    for (const base of [join(ROOT, mount), join(ROOT, mount.split(",")[0] ?? "")]) {
      const dir = join(base, own.path, CGROUP_PARENT, containerId);
      try {
        rmdirSync(dir);
        break;
      } catch (e) {
        // Absent or not ours: leave it. Busy: its processes are still exiting; the caller retries.
        if ((e as NodeJS.ErrnoException).code === "EBUSY") busy++;
      }
    }
  }
  return busy;
}

/**
 * `removeSandboxCgroups`, retried every 100 ms for up to `withinMs` while a cgroup is still busy
 * (the sandbox's processes exit shortly after `runsc delete -force`).
 * @returns the number of cgroup directories still busy at the end (0 when all are gone).
 */
export async function removeSandboxCgroupsSettled(containerId: string, withinMs = 5_000): Promise<number> {
  const until = Date.now() + withinMs;
  for (;;) {
    const busy = removeSandboxCgroups(containerId);
    if (busy === 0 || Date.now() >= until) return busy;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** The OCI `linux` fields that put a container into its own cgroup with these limits. */
export function cgroupSpec(
  containerId: string,
  limits: CgroupLimits,
): { cgroupsPath: string; resources: object } {
  return {
    cgroupsPath: `${CGROUP_PARENT}/${containerId}`,
    resources: {
      memory: { limit: limits.memoryMb * 1024 * 1024 },
      pids: { limit: limits.pidsMax },
    },
  };
}
