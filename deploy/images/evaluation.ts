/**
 * The `gatehouse/evaluation` image (`npm run images -- --only evaluation [--load]`): what the chart's
 * evaluation profile runs besides Gatehouse — the Temporal CLI (`temporal server start-dev`) and
 * nats-server — taken from this machine (the set-up installs both: the Temporal CLI built from the Go
 * module proxy, nats-server from Debian), each with the shared libraries `ldd` names, uid 65534. Not for
 * production: it exists so a trial needs no registry and no other chart.
 *
 * A rebuild is skipped when the node already holds the image built from the same two binaries (a stamp
 * next to the archive records their sizes and modification times and the imported digest).
 */
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { findTemporalCli } from "@gatehouse/temporal-dev";
import { clusterBinDir, imageCacheDir, REPO_ROOT, TAGS, VERSION } from "./spec.ts";

/** The repository Pods name (containerd holds it as docker.io/gatehouse/evaluation:<tag>). */
export const EVALUATION_REPOSITORY = "gatehouse/evaluation";

/** What `buildEvaluationImage` did. */
export interface EvaluationImage {
  /** containerd's name, e.g. docker.io/gatehouse/evaluation:0.1.0. */
  ref: string;
  /** The OCI archive. */
  archive: string;
  /** True when the node already held this build and nothing was done. */
  skipped: boolean;
  /** Wall time, seconds. */
  seconds: number;
}

/**
 * Where each binary is: the Temporal CLI as `gatehouse dev` finds it (GATEHOUSE_TEMPORAL_CLI, PATH, the
 * Go bin folders), nats-server on PATH (or /usr/sbin, Debian's place).
 * @throws Error naming the missing binary and how to install it.
 */
function binaries(): { temporal: string; nats: string } {
  const temporal = findTemporalCli();
  let nats = "";
  try {
    nats = execFileSync("bash", ["-c", "command -v nats-server || ls /usr/sbin/nats-server"], {
      encoding: "utf8",
    }).trim();
  } catch {
    throw new Error("nats-server is not installed: run npm run setup (or apt-get install nats-server)");
  }
  return { temporal, nats };
}

/** Copies `binary` to <root>/usr/local/bin and the shared libraries it loads to the same paths under root. */
function addBinary(root: string, binary: string, name: string): void {
  mkdirSync(join(root, "usr/local/bin"), { recursive: true });
  copyFileSync(binary, join(root, "usr/local/bin", name));
  chmodSync(join(root, "usr/local/bin", name), 0o755);
  const libs = execFileSync("ldd", [binary], { encoding: "utf8" })
    .split("\n")
    .map((l) => /(\/\S+) \(0x/.exec(l)?.[1] ?? /^\s*(\/\S+)\s+\(0x/.exec(l)?.[1])
    .filter((p): p is string => !!p);
  for (const lib of libs) {
    mkdirSync(join(root, dirname(lib)), { recursive: true });
    if (!existsSync(join(root, lib))) copyFileSync(lib, join(root, lib));
  }
}

/** The containerd socket and ctr of the local cluster. */
function ctr(args: string[]): string {
  const socket = join(imageCacheDir(), "..", "run", "containerd", "containerd.sock");
  return execFileSync(join(clusterBinDir(), "ctr"), ["--address", socket, "-n", "k8s.io", ...args], {
    encoding: "utf8",
  });
}

/** The digest the node holds `ref` at, or undefined. */
function nodeDigest(ref: string): string | undefined {
  const line = ctr(["images", "ls"])
    .split("\n")
    .find((l) => l.split(/\s+/)[0] === ref);
  return line?.split(/\s+/)[2];
}

/**
 * Builds gatehouse/evaluation:<version> into `out` (an OCI archive), and with `load` imports it into the
 * local cluster's containerd under every tag (<version>, dev). Skips the build when `load` and the node
 * holds the image made from the same binaries.
 * @throws Error when a binary is missing or image.sh fails.
 */
export function buildEvaluationImage(out: string, load: boolean): EvaluationImage {
  const t0 = performance.now();
  const seconds = () => Math.round((performance.now() - t0) / 100) / 10;
  const { temporal, nats } = binaries();
  const ref = `docker.io/${EVALUATION_REPOSITORY}:${VERSION}`;
  const archive = join(out, "evaluation.oci.tar");
  const stampFile = join(imageCacheDir(), "evaluation.stamp");
  const inputs = [temporal, nats]
    .map((f) => {
      const st = statSync(f);
      return `${f}:${st.size}:${Math.floor(st.mtimeMs)}`;
    })
    .join(" ");
  if (load && existsSync(stampFile) && existsSync(archive)) {
    const [stampInputs, stampDigest] = readFileSync(stampFile, "utf8").trim().split("\n");
    if (stampInputs === `${VERSION} ${inputs}` && stampDigest && nodeDigest(ref) === stampDigest) {
      return { ref, archive, skipped: true, seconds: seconds() };
    }
  }
  const root = mkdtempSync(join(tmpdir(), "gh-evaluation-rootfs-"));
  try {
    addBinary(root, temporal, "temporal");
    addBinary(root, nats, "nats-server");
    mkdirSync(join(root, "tmp"));
    chmodSync(join(root, "tmp"), 0o1777);
    mkdirSync(join(root, "data"));
    mkdirSync(join(root, "etc"));
    // Go's user lookups (the Temporal CLI's home directory) read these.
    writeFileSync(join(root, "etc/passwd"), "nobody:x:65534:65534:nobody:/tmp:/usr/sbin/nologin\n");
    writeFileSync(join(root, "etc/group"), "nogroup:x:65534:\n");
    mkdirSync(out, { recursive: true });
    const args = [
      join(REPO_ROOT, "deploy", "cluster", "image.sh"),
      "--ref",
      ref,
      "--rootfs",
      root,
      "--user",
      "65534:65534",
      "--workdir",
      "/tmp",
      "--env",
      "HOME=/tmp",
      "--env",
      "PATH=/usr/local/bin",
      "--entrypoint",
      "/usr/local/bin/temporal",
      "--out",
      archive,
      "--label",
      `org.opencontainers.image.version=${VERSION}`,
      "--label",
      "org.opencontainers.image.title=gatehouse-evaluation",
    ];
    if (!load) args.push("--no-import");
    execFileSync("bash", args, { stdio: ["ignore", "inherit", "inherit"] });
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  if (load) {
    for (const tag of TAGS.filter((x) => x !== VERSION)) {
      ctr(["images", "tag", "--force", ref, `docker.io/${EVALUATION_REPOSITORY}:${tag}`]);
    }
    mkdirSync(imageCacheDir(), { recursive: true });
    writeFileSync(stampFile, `${VERSION} ${inputs}\n${nodeDigest(ref) ?? ""}\n`);
  }
  return { ref, archive, skipped: false, seconds: seconds() };
}
