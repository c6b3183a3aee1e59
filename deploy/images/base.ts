/**
 * The base root file system of an image, built from Debian's packages without a base image or a
 * container engine: apt resolves the dependency closure of the spec's packages, `apt-get download`
 * fetches them and `dpkg-deb -x` extracts them (no maintainer scripts run), then the build machine's
 * Node binary (and npm, for the services image), /etc/passwd with the nonroot user, a CA bundle and
 * the mount points are added. Cached under `<cache>/base/<kind>-<key>/rootfs`, keyed by the exact
 * package files and the Node version, so only the first build (or a package update) pays for it.
 */
import { execFileSync } from "node:child_process";
import { createHash } from "node:crypto";
import {
  chmodSync,
  chownSync,
  cpSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { dirname, join } from "node:path";
import { type ImageSpec, NONROOT_UID } from "./spec.ts";

/** Where apt keeps the package lists it resolves from. */
const APT_LISTS = "/var/lib/apt/lists";

/** Bumped when what buildBase writes changes, so older cached bases are not reused. */
const BASE_FORMAT = 2;

/** A base root file system ready to be copied under an app. */
export interface BaseRootfs {
  /** Absolute path of the root file system directory. */
  rootfs: string;
  /** True when it came from the cache (nothing was downloaded or extracted). */
  cached: boolean;
  /** The Debian package files it was extracted from (e.g. "git_1%3a2.39.5-0+deb12u2_amd64.deb"). */
  debs: string[];
}

function run(cmd: string, args: string[], cwd?: string): string {
  try {
    return execFileSync(cmd, args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });
  } catch (err) {
    const e = err as { stderr?: string; message: string };
    throw new Error(`${cmd} ${args.slice(0, 3).join(" ")}… failed: ${e.stderr?.trim() || e.message}`);
  }
}

/** Names of the packages `roots` need at run time (Depends and Pre-Depends, recursively), per apt. */
export function debianClosure(roots: readonly string[]): string[] {
  const out = run("apt-cache", [
    "depends",
    "--recurse",
    "--no-recommends",
    "--no-suggests",
    "--no-conflicts",
    "--no-breaks",
    "--no-replaces",
    "--no-enhances",
    ...roots,
  ]);
  // Top-level lines name packages; indented lines are their relations; <name> is a virtual package.
  const names = out.split("\n").filter((l) => l !== "" && !l.startsWith(" ") && !l.startsWith("<"));
  return [...new Set(names)].sort();
}

/** The .deb file name and URI apt would fetch for each package (no download). */
function debFiles(packages: readonly string[]): Array<{ uri: string; file: string }> {
  const out = run("apt-get", ["download", "--print-uris", ...packages]);
  return out
    .split("\n")
    .map((l) => /^'([^']+)' (\S+\.deb) /.exec(l))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => ({ uri: m[1]!, file: m[2]! }));
}

const PASSWD = `root:x:0:0:root:/root:/usr/sbin/nologin\nnonroot:x:${NONROOT_UID}:${NONROOT_UID}:nonroot:/tmp:/usr/sbin/nologin\n`;
const GROUP = `root:x:0:\nnonroot:x:${NONROOT_UID}:\n`;

/** Documentation and translations nothing in the image reads. */
const PRUNED = ["usr/share/doc", "usr/share/man", "usr/share/info", "usr/share/locale", "usr/share/lintian"];

/** All *.crt under dir, recursively. */
function certificates(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((d) => d.isFile() && d.name.endsWith(".crt"))
    .map((d) => join(d.parentPath, d.name))
    .sort();
}

/**
 * Returns the base root file system of `spec`, building it into `cacheDir` when it is not there.
 * `node` is the Node binary to ship (default the one running this build: the native modules in
 * node_modules were built for it).
 * @throws Error when apt-get/dpkg-deb are missing or fail (the message names the command).
 */
export function buildBase(spec: ImageSpec, cacheDir: string, node = process.execPath): BaseRootfs {
  // Keyed by what decides the result: the package lists apt resolves from (their files change on
  // apt-get update), the spec's packages, the Node binary and this file's format.
  const lists = readdirSync(APT_LISTS)
    .filter((f) => f.endsWith("_Packages") || f.endsWith("_Packages.lz4") || f.endsWith("_InRelease"))
    .sort()
    .map((f) => [f, statSync(join(APT_LISTS, f)).mtimeMs]);
  const key = createHash("sha256")
    .update(
      JSON.stringify({
        BASE_FORMAT,
        lists,
        packages: spec.debianPackages,
        node: [process.version, statSync(node).size],
        npm: spec.npm,
      }),
    )
    .digest("hex")
    .slice(0, 16);
  const dir = join(cacheDir, "base", `${spec.kind}-${key}`);
  const rootfs = join(dir, "rootfs");
  if (existsSync(join(dir, "complete"))) {
    const files = readFileSync(join(dir, "packages.txt"), "utf8")
      .split("\n")
      .filter((l) => l.endsWith(".deb"));
    return { rootfs, cached: true, debs: files };
  }

  const packages = debianClosure(spec.debianPackages);
  const debs = debFiles(packages);
  if (debs.length !== packages.length) {
    throw new Error(
      `apt-get download --print-uris named ${debs.length} files for ${packages.length} packages`,
    );
  }
  const files = debs.map((d) => d.file);
  const debDir = join(cacheDir, "debs");
  mkdirSync(debDir, { recursive: true });
  const missing = debs.filter((d) => !existsSync(join(debDir, d.file))).map((d) => d.file.split("_")[0]!);
  if (missing.length > 0) run("apt-get", ["download", "-q", ...missing], debDir);

  const work = `${dir}.tmp-${process.pid}`;
  rmSync(work, { recursive: true, force: true });
  const root = join(work, "rootfs");
  mkdirSync(root, { recursive: true });
  for (const file of files) run("dpkg-deb", ["-x", join(debDir, file), root]);
  for (const p of PRUNED) rmSync(join(root, p), { recursive: true, force: true });

  mkdirSync(join(root, "usr/bin"), { recursive: true });
  cpSync(node, join(root, "usr/bin/node"));
  if (spec.npm) {
    const npmDir = join(dirname(node), "..", "lib", "node_modules", "npm");
    if (!existsSync(join(npmDir, "bin", "npm-cli.js"))) {
      throw new Error(`npm is not next to ${node} (looked for ${npmDir}); install Node 20 with npm`);
    }
    cpSync(npmDir, join(root, "usr/lib/node_modules/npm"), { recursive: true });
    for (const [name, cli] of [
      ["npm", "npm-cli.js"],
      ["npx", "npx-cli.js"],
    ] as const) {
      const wrapper = join(root, "usr/bin", name);
      writeFileSync(wrapper, `#!/bin/sh\nexec /usr/bin/node /usr/lib/node_modules/npm/bin/${cli} "$@"\n`);
      chmodSync(wrapper, 0o755);
    }
  }
  mkdirSync(join(root, "etc/ssl/certs"), { recursive: true });
  writeFileSync(join(root, "etc/passwd"), PASSWD);
  writeFileSync(join(root, "etc/group"), GROUP);
  writeFileSync(join(root, "etc/nsswitch.conf"), "passwd: files\ngroup: files\nhosts: files dns\n");
  const crts = certificates(join(root, "usr/share/ca-certificates"));
  if (crts.length > 0) {
    writeFileSync(
      join(root, "etc/ssl/certs/ca-certificates.crt"),
      `${crts.map((c) => readFileSync(c, "utf8").trimEnd()).join("\n")}\n`,
    );
  }
  // Mount points: the runtime mounts /proc, /dev and /sys; the Pod mounts volumes at /tmp and /data.
  for (const mount of ["tmp", "data", "app", "proc", "dev", "sys"])
    mkdirSync(join(root, mount), { recursive: true });
  chmodSync(join(root, "tmp"), 0o1777);
  if (process.getuid?.() === 0) chownSync(join(root, "data"), NONROOT_UID, NONROOT_UID);
  writeFileSync(join(work, "packages.txt"), `${files.join("\n")}\nnode ${process.version}\n`);
  writeFileSync(join(work, "complete"), new Date().toISOString());
  rmSync(dir, { recursive: true, force: true });
  renameSync(work, dir);
  return { rootfs, cached: false, debs: files };
}
