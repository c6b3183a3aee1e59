/**
 * `npm run images [-- --load] [--only services|sandbox|evaluation] [--out DIR]`: builds gatehouse/services and
 * gatehouse/sandbox as OCI archives without a Docker engine — the base root file system from Debian's
 * packages (base.ts, cached outside the checkout), the app under /app (app.ts, rebuilt each time), the
 * image written by deploy/cluster/image.sh (umoci) — and with --load imports them into the local
 * cluster's containerd, tagged <version> and dev. Prints what it did and writes <out>/images.json:
 * `{ images: [{ kind, ref, archive, rootfsBytes, archiveBytes, baseCached, seconds: {base, app, image} }] }`.
 * `--only evaluation` builds gatehouse/evaluation instead (evaluation.ts: Temporal's dev server and NATS
 * for the chart's evaluation profile; not part of the default build).
 * Exit 2 on bad arguments (naming the flag), 1 on a failed build.
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, renameSync, rmSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { parseArgs } from "node:util";
import { buildSandboxApp, buildServicesApp } from "./app.ts";
import { buildBase } from "./base.ts";
import { buildEvaluationImage } from "./evaluation.ts";
import {
  clusterBinDir,
  IMAGES,
  type ImageSpec,
  imageCacheDir,
  NONROOT_UID,
  REPO_ROOT,
  TAGS,
  VERSION,
} from "./spec.ts";

const USAGE = `usage: npm run images -- [--load] [--only services|sandbox|evaluation] [--out DIR] [--app-only DIR]
  --load         also import the images into the local cluster's containerd (npm run cluster -- up first),
                 as docker.io/gatehouse/<image>:${VERSION} and :dev (Pods name them gatehouse/<image>:<tag>)
  --only IMAGE   build one image: services or sandbox (default both), or evaluation: the Temporal dev
                 server and NATS of the chart's evaluation profile (skipped when the node has it already)
  --out DIR      where the OCI archives and images.json go (default deploy/images/out)
  --app-only DIR only write each image's /app tree to DIR/<image> (no base, no archive: the Containerfile's step)
The base root file systems are cached in ${imageCacheDir()}/base (GATEHOUSE_CACHE_DIR moves it).`;

/** What one image build produced (also the entries of images.json). */
export interface BuiltImage {
  kind: ImageSpec["kind"];
  /** containerd's name of the image, e.g. docker.io/gatehouse/services:0.1.0. */
  ref: string;
  /** Absolute path of the OCI archive (a tar of an OCI image layout). */
  archive: string;
  /** Absolute path of the root file system the archive holds (kept for inspection and tests). */
  rootfs: string;
  /** Bytes of the root file system (du --apparent-size) and of the archive. */
  rootfsBytes: number;
  archiveBytes: number;
  /** True when the base came from the cache. */
  baseCached: boolean;
  /** Wall time of each step, seconds. */
  seconds: { base: number; app: number; image: number };
}

function fail(message: string, code = 2): never {
  console.error(`images: ${message}`);
  if (code === 2) console.error("images: run with --help for the flags");
  process.exit(code);
}

function seconds(since: number): number {
  return Math.round((performance.now() - since) / 100) / 10;
}

function duBytes(path: string): number {
  return Number(execFileSync("du", ["-sb", path], { encoding: "utf8" }).split("\t")[0]);
}

/** The cluster script that writes an OCI archive from a root file system (and imports it). */
const IMAGE_SH = join(REPO_ROOT, "deploy", "cluster", "image.sh");

/** Builds one image into `out`; imports it when `load`. */
export async function buildImage(spec: ImageSpec, out: string, load: boolean): Promise<BuiltImage> {
  const cache = imageCacheDir();
  let t = performance.now();
  const base = buildBase(spec, cache);
  const baseSeconds = seconds(t);

  t = performance.now();
  const work = join(out, spec.kind);
  const app = join(work, "app");
  await (spec.kind === "services" ? buildServicesApp(app) : buildSandboxApp(app));
  // The image's tree: the cached base hard-linked (nothing writes to it), the fresh app moved in.
  const rootfs = join(work, "rootfs");
  rmSync(rootfs, { recursive: true, force: true });
  execFileSync("cp", ["-al", base.rootfs, rootfs]);
  rmSync(join(rootfs, "app"), { recursive: true, force: true });
  renameSync(app, join(rootfs, "app"));
  const appSeconds = seconds(t);

  t = performance.now();
  if (!existsSync(IMAGE_SH)) fail(`${IMAGE_SH} is missing (the local cluster's scripts)`, 1);
  const ref = `docker.io/${spec.repository}:${VERSION}`;
  const archive = join(out, `${spec.kind}.oci.tar`);
  const args = [
    IMAGE_SH,
    "--ref",
    ref,
    "--rootfs",
    rootfs,
    "--user",
    `${NONROOT_UID}:${NONROOT_UID}`,
    "--workdir",
    "/tmp",
    "--out",
    archive,
    "--label",
    `org.opencontainers.image.version=${VERSION}`,
    "--label",
    `org.opencontainers.image.title=gatehouse-${spec.kind}`,
  ];
  for (const a of spec.entrypoint) args.push("--entrypoint", a);
  for (const a of spec.cmd) args.push("--cmd", a);
  for (const e of spec.env) args.push("--env", e);
  if (!load) args.push("--no-import");
  execFileSync("bash", args, { stdio: ["ignore", "inherit", "inherit"] });
  if (load) {
    // The same image under its other tags (image.sh imports one name).
    const ctr = join(clusterBinDir(), "ctr");
    const socket = join(imageCacheDir(), "..", "run", "containerd", "containerd.sock");
    for (const tag of TAGS.filter((x) => x !== VERSION)) {
      execFileSync(
        ctr,
        [
          "--address",
          socket,
          "-n",
          "k8s.io",
          "images",
          "tag",
          "--force",
          ref,
          `docker.io/${spec.repository}:${tag}`,
        ],
        {
          stdio: ["ignore", "ignore", "inherit"],
        },
      );
    }
  }
  return {
    kind: spec.kind,
    ref,
    archive,
    rootfs,
    rootfsBytes: duBytes(rootfs),
    archiveBytes: statSync(archive).size,
    baseCached: base.cached,
    seconds: { base: baseSeconds, app: appSeconds, image: seconds(t) },
  };
}

async function main(): Promise<void> {
  let values: { load?: boolean; only?: string; out?: string; "app-only"?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      options: {
        load: { type: "boolean" },
        only: { type: "string" },
        out: { type: "string" },
        "app-only": { type: "string" },
        help: { type: "boolean", short: "h" },
      },
      strict: true,
    }));
  } catch (err) {
    fail((err as Error).message);
  }
  if (values.help) {
    console.log(USAGE);
    return;
  }
  if (values.only === "evaluation") {
    if (values["app-only"]) fail("--app-only: the evaluation image has no /app tree: drop --app-only");
    const out = resolve(values.out ?? join(REPO_ROOT, "deploy", "images", "out"));
    try {
      const e = buildEvaluationImage(out, values.load === true);
      console.log(
        e.skipped
          ? `images: ${e.ref} is on the node already, built from the same binaries (${e.seconds} s)`
          : `images: ${e.ref} → ${e.archive} (${(statSync(e.archive).size / 2 ** 20).toFixed(0)} MiB archive; ${e.seconds} s)`,
      );
    } catch (err) {
      fail(`evaluation: ${(err as Error).message}`, 1);
    }
    return;
  }
  const specs = values.only ? IMAGES.filter((s) => s.kind === values.only) : [...IMAGES];
  if (specs.length === 0) fail(`--only ${values.only}: expected services, sandbox or evaluation`);
  if (values["app-only"]) {
    if (values.load) fail("--app-only writes no image, so --load has nothing to import: drop one of them");
    const dir = resolve(values["app-only"]);
    for (const spec of specs) {
      await (spec.kind === "services" ? buildServicesApp : buildSandboxApp)(join(dir, spec.kind));
      console.log(`images: ${spec.kind} app → ${join(dir, spec.kind)}`);
    }
    return;
  }
  const out = resolve(values.out ?? join(REPO_ROOT, "deploy", "images", "out"));
  mkdirSync(out, { recursive: true });
  const built: BuiltImage[] = [];
  for (const spec of specs) {
    const t = performance.now();
    try {
      built.push(await buildImage(spec, out, values.load === true));
    } catch (err) {
      fail(`${spec.kind}: ${(err as Error).message}`, 1);
    }
    const b = built.at(-1)!;
    console.log(
      `images: ${b.ref} → ${b.archive} (${(b.archiveBytes / 2 ** 20).toFixed(0)} MiB archive, ${(b.rootfsBytes / 2 ** 20).toFixed(0)} MiB root fs; base ${b.baseCached ? "cached" : "built"} ${b.seconds.base} s, app ${b.seconds.app} s, image ${b.seconds.image} s; ${seconds(t)} s)`,
    );
  }
  writeFileSync(join(out, "images.json"), `${JSON.stringify({ images: built }, null, 2)}\n`);
}

if (import.meta.url === `file://${process.argv[1]}`) await main();
