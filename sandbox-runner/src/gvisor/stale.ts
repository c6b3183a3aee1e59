/**
 * Bundle templates left behind by a runner that died without closing (`kill -9`, a crash, a power
 * cut). Each template dir holds `owner.json` — the pid and start time of the runner that made it —
 * so the next runner that starts under the same parent dir can tell a dead owner's dir from a live
 * runner's, and clean it up: its containers force-deleted through runsc, any process still naming
 * the dir killed, their cgroups removed, and the dir deleted.
 */
import { execFile } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { promisify } from "node:util";
import { processInfo } from "@gatehouse/service-kit";
import type { Logger } from "pino";
import { removeSandboxCgroupsSettled } from "./cgroups.ts";

const execFileAsync = promisify(execFile);

/** Prefix of every template dir (mkdtemp adds six characters). */
export const TEMPLATE_PREFIX = "gatehouse-gvisor-";
const OWNER_FILE = "owner.json";

/** The runner that owns a template dir. */
interface Owner {
  pid: number;
  /** Clock ticks since boot when it started (0 when unknown): a reused pid is not the owner. */
  startTicks: number;
}

/** Records this process as the owner of template dir `dir`. */
export async function writeOwner(dir: string): Promise<void> {
  const owner: Owner = { pid: process.pid, startTicks: processInfo(process.pid)?.startTicks ?? 0 };
  await writeFile(join(dir, OWNER_FILE), `${JSON.stringify(owner)}\n`);
}

/** True when `dir`'s owner.json names a runner that is not running any more. A dir without one is left alone. */
function ownerGone(dir: string): boolean {
  let owner: Owner;
  try {
    owner = JSON.parse(readFileSync(join(dir, OWNER_FILE), "utf8"));
  } catch {
    return false; // being created right now, or not one of ours
  }
  const now = processInfo(owner.pid);
  if (!now) return true;
  return Boolean(owner.startTicks && now.startTicks && owner.startTicks !== now.startTicks);
}

/** Pids of the processes whose command line names a path in `dir` (runsc, its sandbox and gofer). */
function processesNaming(dir: string): number[] {
  if (process.platform !== "linux") return [];
  const pids: number[] = [];
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      if (readFileSync(`/proc/${name}/cmdline`, "utf8").includes(`${dir}/`)) pids.push(Number(name));
    } catch {
      // exited meanwhile
    }
  }
  return pids.filter((p) => p !== process.pid);
}

/** Force-deletes the containers of one stale template, kills what still runs from it, removes it. */
async function reap(dir: string, runsc: string): Promise<void> {
  let ids: string[] = [];
  try {
    ids = readdirSync(join(dir, "run"));
  } catch {
    // no containers were ever started
  }
  for (const id of ids) {
    await execFileAsync(runsc, [`--root=${join(dir, "state")}`, "delete", "-force", id], {
      env: { PATH: "/usr/sbin:/usr/bin:/sbin:/bin" },
      timeout: 30_000,
    }).catch(() => undefined);
  }
  for (const pid of processesNaming(dir)) {
    try {
      process.kill(pid, "SIGKILL");
    } catch {
      // already gone
    }
  }
  for (const id of ids) await removeSandboxCgroupsSettled(id).catch(() => 0);
  await rm(dir, { recursive: true, force: true });
}

/**
 * Cleans up every template dir under `parent` whose owning runner is gone (see the module comment).
 * Dirs of live runners, and dirs without an owner.json, are left alone.
 * @returns the dirs removed.
 */
export async function reapStaleTemplates(parent: string, runsc: string, logger: Logger): Promise<string[]> {
  let names: string[];
  try {
    names = readdirSync(parent).filter((n) => n.startsWith(TEMPLATE_PREFIX));
  } catch {
    return [];
  }
  const removed: string[] = [];
  for (const name of names) {
    const dir = join(parent, name);
    if (!ownerGone(dir)) continue;
    try {
      await reap(dir, runsc);
      removed.push(dir);
      logger.info(
        { event: "stale_sandboxes_removed", dir },
        `removed the sandboxes and files of a sandbox runner that is gone (${dir})`,
      );
    } catch (err) {
      logger.warn(
        { event: "stale_sandboxes_not_removed", dir, err: (err as Error).message },
        `could not remove ${dir} left by a sandbox runner that is gone`,
      );
    }
  }
  return removed;
}
