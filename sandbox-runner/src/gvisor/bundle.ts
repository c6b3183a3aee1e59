import { chmod, copyFile, mkdir, mkdtemp, realpath, rm, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { type CgroupLimits, cgroupSpec } from "./cgroups.ts";
import { linkedLibraries } from "./libraries.ts";
import { TEMPLATE_PREFIX, writeOwner } from "./stale.ts";

/** Where the isolate host's files appear inside the container (read-only). */
export const SANDBOX_DIR = "/sandbox";
/** The isolate host entry inside the container. */
export const SANDBOX_ENTRY = `${SANDBOX_DIR}/isolate-host.cjs`;
/** uid/gid the container process runs as ("nobody"). */
export const SANDBOX_UID = 65534;
/** The tmpfs scratch dir inside the container: the only writable path; the isolate host empties it per execution. */
export const SCRATCH_DIR = "/scratch";

/** One read-only bind mount: host `source` appears at `destination` in the container. */
export interface BindMount {
  source: string;
  destination: string;
}

/**
 * The shared, read-only pieces every container of this runner uses, prepared once:
 * an empty root dir, a copy of the isolate host bundle plus isolated-vm's native module, the node binary
 * and the libraries it links. Per-container state is only a config.json (see containerConfig).
 */
export interface BundleTemplate {
  /** Private working dir (0700) holding owner.json, rootfs/, files/, state/ and run/. */
  dataDir: string;
  /** Empty directory used as the container's read-only root file system. */
  rootfs: string;
  /** runsc --root state directory. */
  stateDir: string;
  /** Parent of per-execution bundle dirs. */
  runDir: string;
  /** Absolute path of the node binary inside the container (same as on the host). */
  nodePath: string;
  mounts: BindMount[];
}

/**
 * Prepares a BundleTemplate under a fresh temp dir (or `parentDir`), owned by this process
 * (`owner.json`, see ./stale.ts: a later runner removes it once this process is gone).
 * @param isolateHostPath absolute path of dist/isolate-host.cjs on the host
 * @throws Error when ldd fails or a file cannot be copied.
 */
export async function prepareBundleTemplate(
  isolateHostPath: string,
  parentDir?: string,
): Promise<BundleTemplate> {
  const base = parentDir ?? tmpdir();
  await mkdir(base, { recursive: true });
  const dataDir = await mkdtemp(join(base, TEMPLATE_PREFIX));
  await writeOwner(dataDir);
  const rootfs = join(dataDir, "rootfs");
  const files = join(dataDir, "files");
  const stateDir = join(dataDir, "state");
  const runDir = join(dataDir, "run");
  for (const dir of [rootfs, files, stateDir, runDir]) await mkdir(dir, { recursive: true });

  // The isolate host bundle and isolated-vm's runtime files (JS entry + native addon), nothing else.
  const require = createRequire(import.meta.url);
  const ivmDir = dirname(require.resolve("isolated-vm/package.json"));
  const ivmTarget = join(files, "node_modules", "isolated-vm");
  await mkdir(join(ivmTarget, "out"), { recursive: true });
  await copyFile(isolateHostPath, join(files, "isolate-host.cjs"));
  await copyFile(join(ivmDir, "package.json"), join(ivmTarget, "package.json"));
  await copyFile(join(ivmDir, "isolated-vm.js"), join(ivmTarget, "isolated-vm.js"));
  const addon = join(ivmTarget, "out", "isolated_vm.node");
  await copyFile(join(ivmDir, "out", "isolated_vm.node"), addon);
  for (const dir of [files, join(files, "node_modules"), ivmTarget, join(ivmTarget, "out")])
    await chmod(dir, 0o755);
  for (const file of [
    "isolate-host.cjs",
    "node_modules/isolated-vm/package.json",
    "node_modules/isolated-vm/isolated-vm.js",
  ]) {
    await chmod(join(files, file), 0o644);
  }
  await chmod(addon, 0o755);

  const nodePath = await realpath(process.execPath);
  const mounts: BindMount[] = [
    { source: files, destination: SANDBOX_DIR },
    { source: nodePath, destination: nodePath },
  ];
  for (const lib of linkedLibraries([nodePath, addon])) {
    mounts.push({ source: await realpath(lib), destination: lib });
  }
  return { dataDir, rootfs, stateDir, runDir, nodePath, mounts };
}

/** Removes everything prepareBundleTemplate created. */
export async function removeBundleTemplate(template: BundleTemplate): Promise<void> {
  await rm(template.dataDir, { recursive: true, force: true });
}

/** Per-container choices on top of the template. */
export interface ContainerOptions {
  /** Memory and pids limits through a cgroup of the container's own; null = no cgroup (runsc --ignore-cgroups). */
  cgroups?: CgroupLimits | null;
}

/**
 * OCI runtime config for one container running `args` (args[0] is an absolute path inside the container):
 * read-only empty root, read-only binds of the template mounts, a tmpfs scratch dir at /scratch (16 MiB,
 * noexec; HOME, cwd, TMPDIR and GATEHOUSE_SCRATCH point there; the only writable place: /tmp is an
 * empty read-only tmpfs), its own /proc,
 * uid/gid 65534, no capabilities, noNewPrivileges, fresh pid/net/ipc/uts/mount namespaces, at most 256
 * open files, and with `options.cgroups` a cgroup limiting memory and pids.
 */
export function containerConfig(
  template: BundleTemplate,
  args: string[],
  options: ContainerOptions & { containerId?: string } = {},
): object {
  const noCaps = { bounding: [], effective: [], inheritable: [], permitted: [], ambient: [] };
  const cgroups =
    options.cgroups && options.containerId ? cgroupSpec(options.containerId, options.cgroups) : null;
  return {
    ociVersion: "1.0.0",
    process: {
      terminal: false,
      user: { uid: SANDBOX_UID, gid: SANDBOX_UID },
      args,
      env: [
        `HOME=${SCRATCH_DIR}`,
        "LANG=C.UTF-8",
        `GATEHOUSE_SCRATCH=${SCRATCH_DIR}`,
        `TMPDIR=${SCRATCH_DIR}`,
      ],
      cwd: SCRATCH_DIR,
      capabilities: noCaps,
      noNewPrivileges: true,
      rlimits: [{ type: "RLIMIT_NOFILE", hard: 256, soft: 256 }],
    },
    root: { path: template.rootfs, readonly: true },
    hostname: "sandbox",
    mounts: [
      { destination: "/proc", type: "proc", source: "proc" },
      {
        destination: SCRATCH_DIR,
        type: "tmpfs",
        source: "tmpfs",
        options: [
          "nosuid",
          "nodev",
          "noexec",
          "size=16m",
          "mode=0700",
          `uid=${SANDBOX_UID}`,
          `gid=${SANDBOX_UID}`,
        ],
      },
      // runsc would otherwise add a writable /tmp of its own; this keeps /scratch the only writable path.
      {
        destination: "/tmp",
        type: "tmpfs",
        source: "tmpfs",
        options: ["ro", "nosuid", "nodev", "noexec", "size=4k"],
      },
      ...template.mounts.map((m) => ({
        destination: m.destination,
        type: "bind",
        source: m.source,
        options: ["rbind", "ro", "nosuid", "nodev"],
      })),
    ],
    linux: {
      namespaces: [{ type: "pid" }, { type: "network" }, { type: "ipc" }, { type: "uts" }, { type: "mount" }],
      ...(cgroups ?? {}),
    },
  };
}

/** Writes `<runDir>/<id>/config.json` and returns the bundle dir. */
export async function writeContainerBundle(
  template: BundleTemplate,
  id: string,
  args: string[],
  options: ContainerOptions = {},
): Promise<string> {
  const dir = join(template.runDir, id);
  await mkdir(dir, { recursive: true });
  await writeFile(
    join(dir, "config.json"),
    JSON.stringify(containerConfig(template, args, { ...options, containerId: id }), null, 2),
  );
  return dir;
}
