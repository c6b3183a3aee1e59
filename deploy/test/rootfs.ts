/**
 * Test helpers for the images: build them (deploy/images/build.ts), unpack an OCI archive with umoci,
 * and run a process in an unpacked root file system the way a Pod with readOnlyRootFilesystem does —
 * the root mounted read-only, host directories as the /tmp and /data volumes, /proc and /dev mounted,
 * as uid:gid 65532 — in its own mount namespace (`unshare --mount` + `chroot`; needs root). The
 * network namespace is the host's, so a process inside reaches servers the test starts on loopback.
 */
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { BuiltImage } from "../images/build.ts";
import { clusterBinDir, NONROOT_UID, REPO_ROOT } from "../images/spec.ts";

/** Temp directories the helpers made (archives, unpacked bundles, volumes): removeTempDirs deletes them. */
const made: string[] = [];

/** A fresh temp directory, removed by removeTempDirs. */
function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  made.push(dir);
  return dir;
}

/** Removes every temp directory the helpers made (hundreds of MiB per build); call once at the end. */
export function removeTempDirs(): void {
  for (const dir of made.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** umoci from the cluster's tool folder, else PATH. */
export function umoci(): string {
  const cached = join(clusterBinDir(), "umoci");
  try {
    execFileSync(cached, ["--version"], { stdio: "ignore" });
    return cached;
  } catch {
    return "umoci";
  }
}

/** Runs `npm run images` into `out` (a fresh temp dir by default); returns images.json's entries by kind. */
export function buildImages(out = tempDir("gatehouse-images-")): Record<string, BuiltImage> {
  execFileSync(
    process.execPath,
    ["--no-node-snapshot", "--import", "tsx", join(REPO_ROOT, "deploy/images/build.ts"), "--out", out],
    { cwd: REPO_ROOT, stdio: ["ignore", "inherit", "inherit"], timeout: 1_200_000 },
  );
  const { images } = JSON.parse(readFileSync(join(out, "images.json"), "utf8")) as { images: BuiltImage[] };
  return Object.fromEntries(images.map((i) => [i.kind, i]));
}

/** An OCI runtime bundle unpacked from an archive: its config.json and root file system. */
export interface Unpacked {
  bundle: string;
  rootfs: string;
  /** config.json of the bundle (OCI runtime spec, written by umoci from the image config). */
  config: {
    process: { user: { uid: number; gid: number }; args: string[]; env: string[]; cwd: string };
    root: { path: string; readonly?: boolean };
    mounts: Array<{ destination: string; type?: string; source?: string; options?: string[] }>;
  };
}

/** Untars `archive` and `umoci unpack`s its `tag` into a fresh directory. */
export function unpack(archive: string, tag: string): Unpacked {
  const dir = tempDir("gatehouse-unpack-");
  const layout = join(dir, "layout");
  mkdirSync(layout);
  execFileSync("tar", ["-xf", archive, "-C", layout]);
  const bundle = join(dir, "bundle");
  execFileSync(umoci(), ["unpack", "--image", `${layout}:${tag}`, bundle], { stdio: "ignore" });
  return {
    bundle,
    rootfs: join(bundle, "rootfs"),
    config: JSON.parse(readFileSync(join(bundle, "config.json"), "utf8")) as Unpacked["config"],
  };
}

/** Host directories mounted as the container's writable volumes. */
export interface Volumes {
  tmp: string;
  data: string;
}

/** Fresh host directories for /tmp and /data, writable by uid 65532 (as an emptyDir and a PVC are). */
export function freshVolumes(): Volumes {
  const base = tempDir("gatehouse-volumes-");
  const v = { tmp: join(base, "tmp"), data: join(base, "data") };
  for (const d of Object.values(v)) {
    mkdirSync(d);
    chmodSync(d, 0o1777);
  }
  return v;
}

const ENTER = `set -e
R="$1"; T="$2"; D="$3"; shift 3
/bin/mount --bind "$R" "$R"
/bin/mount -o remount,bind,ro "$R"
/bin/mount --bind "$T" "$R/tmp"
/bin/mount --bind "$D" "$R/data"
/bin/mount -t proc proc "$R/proc"
/bin/mount --rbind /dev "$R/dev"
cd /
exec /usr/sbin/chroot --userspec=${NONROOT_UID}:${NONROOT_UID} "$R" "$@"`;

/** A process started in a root file system; `output()` is its stdout and stderr so far. */
export type RootfsProcess = ChildProcess & { output(): string; exited: Promise<number | null> };

/**
 * Starts `argv` inside `rootfs` read-only as uid 65532 with exactly `env` (the image's environment
 * plus the Pod's), `volumes` at /tmp and /data. The working directory is / (chroot's).
 */
export function runInRootfs(rootfs: string, volumes: Volumes, argv: string[], env: string[]): RootfsProcess {
  const child = spawn(
    "/usr/bin/unshare",
    [
      "--mount",
      "--propagation",
      "private",
      "--fork",
      "/bin/sh",
      "-c",
      ENTER,
      "sh",
      rootfs,
      volumes.tmp,
      volumes.data,
      ...argv,
    ],
    {
      env: Object.fromEntries(env.map((e) => [e.slice(0, e.indexOf("=")), e.slice(e.indexOf("=") + 1)])),
      stdio: ["ignore", "pipe", "pipe"],
      // Its own process group: unshare --fork ignores SIGTERM and does not forward it, so signals go
      // to the group (the process inside handles them; unshare then exits with its status).
      detached: true,
    },
  );
  let output = "";
  const keep = (d: Buffer) => {
    output = (output + d.toString()).slice(-40_000);
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  return Object.assign(child, { output: () => output, exited });
}

/** Runs `argv` to completion in `rootfs` (as runInRootfs); resolves with its exit code and output. */
export async function execInRootfs(
  rootfs: string,
  volumes: Volumes,
  argv: string[],
  env: string[],
): Promise<{ code: number | null; output: string }> {
  const p = runInRootfs(rootfs, volumes, argv, env);
  const code = await p.exited;
  return { code, output: p.output() };
}

/**
 * Waits until GET http://127.0.0.1:<port>/healthz answers 200, failing early with the process's
 * output when it exits, or after `timeoutMs`.
 */
export async function waitHealthy(
  name: string,
  port: number,
  p: RootfsProcess,
  timeoutMs = 180_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exited = false;
  void p.exited.then(() => {
    exited = true;
  });
  for (;;) {
    if (exited) throw new Error(`${name} exited before /healthz answered:\n${p.output()}`);
    try {
      const r = await fetch(`http://127.0.0.1:${port}/healthz`, { signal: AbortSignal.timeout(2_000) });
      if (r.status === 200) return;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline)
      throw new Error(`${name}: no 200 from /healthz on ${port} in ${timeoutMs} ms:\n${p.output()}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

function signalGroup(p: RootfsProcess, signal: NodeJS.Signals): void {
  try {
    process.kill(-p.pid!, signal);
  } catch {
    // already gone
  }
}

/** Sends SIGTERM (the Pod's stop) to the process and waits for the exit; SIGKILL after 20 s. */
export async function stop(p: RootfsProcess): Promise<number | null> {
  if (p.exitCode !== null || p.signalCode !== null) return p.exitCode;
  signalGroup(p, "SIGTERM");
  const timer = setTimeout(() => signalGroup(p, "SIGKILL"), 20_000);
  const code = await p.exited;
  clearTimeout(timer);
  return code;
}
