/**
 * The external systems an install needs, run in the local cluster for the tests: a Temporal dev server
 * and a NATS server, each in namespace `gh-deps` from the host's own binaries (`temporal`, installed by
 * `npm run setup`; Debian's `nats-server`) packed as images by deploy/cluster/image.sh.
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { basename, dirname, join } from "node:path";
import { findTemporalCli } from "@gatehouse/temporal-dev";
import { kubectl, kubectlOk, REPO, waitFor } from "./cluster.ts";
import { clusterCache } from "./helm.ts";

export const DEPS_NAMESPACE = "gh-deps";
/** In-cluster addresses of the two servers. */
export const TEMPORAL_ADDRESS = `temporal.${DEPS_NAMESPACE}.svc.cluster.local:7233`;
export const NATS_URL = `nats://nats.${DEPS_NAMESPACE}.svc.cluster.local:4222`;

/** The image names already in the node's containerd (namespace k8s.io). */
export function nodeImages(): Set<string> {
  const run = join(clusterCache(), "run", "containerd", "containerd.sock");
  const out = execFileSync(
    join(clusterCache(), "bin", "ctr"),
    ["-a", run, "-n", "k8s.io", "images", "ls", "-q"],
    {
      encoding: "utf8",
    },
  );
  return new Set(out.split("\n").filter(Boolean));
}

/**
 * Packs one dynamically linked binary with the libraries `ldd` names into an image `ref` and imports it
 * (skipped when the node has it: the tag carries the binary's size and mtime).
 */
function imageOfBinary(name: string, binary: string): string {
  const st = statSync(binary);
  // The tag names the binary (size, mtime) and this recipe's revision (r2: /etc/passwd for Go's user lookups).
  const ref = `gatehouse.local/test-${name}:${st.size.toString(36)}-${Math.floor(st.mtimeMs).toString(36)}-r2`;
  if (nodeImages().has(ref)) return ref;
  const root = mkdtempSync(join(tmpdir(), `gh-image-${name}-`));
  try {
    mkdirSync(join(root, "usr/local/bin"), { recursive: true });
    mkdirSync(join(root, "tmp"), { mode: 0o1777 });
    mkdirSync(join(root, "etc"));
    writeFileSync(join(root, "etc/passwd"), "nobody:x:65534:65534:nobody:/tmp:/usr/sbin/nologin\n");
    writeFileSync(join(root, "etc/group"), "nogroup:x:65534:\n");
    copyFileSync(binary, join(root, "usr/local/bin", basename(binary)));
    const libs = execFileSync("ldd", [binary], { encoding: "utf8" })
      .split("\n")
      .map((l) => /(\/\S+) \(0x/.exec(l)?.[1])
      .filter((p): p is string => !!p);
    for (const lib of libs) {
      mkdirSync(join(root, dirname(lib)), { recursive: true });
      copyFileSync(lib, join(root, lib));
    }
    execFileSync("chmod", ["1777", join(root, "tmp")]);
    execFileSync(
      "bash",
      [
        join(REPO, "deploy/cluster/image.sh"),
        "--ref",
        ref,
        "--rootfs",
        root,
        "--entrypoint",
        `/usr/local/bin/${basename(binary)}`,
        "--env",
        "HOME=/tmp",
        "--user",
        "65534:65534",
      ],
      { stdio: "pipe" },
    );
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return ref;
}

const manifest = (name: string, image: string, port: number, args: string[]) => `
apiVersion: apps/v1
kind: Deployment
metadata: { name: ${name}, namespace: ${DEPS_NAMESPACE} }
spec:
  replicas: 1
  selector: { matchLabels: { app: ${name} } }
  template:
    metadata: { labels: { app: ${name} } }
    spec:
      automountServiceAccountToken: false
      containers:
        - name: ${name}
          image: ${image}
          imagePullPolicy: Never
          args: ${JSON.stringify(args)}
          ports: [{ containerPort: ${port} }]
          readinessProbe: { tcpSocket: { port: ${port} }, periodSeconds: 1 }
---
apiVersion: v1
kind: Service
metadata: { name: ${name}, namespace: ${DEPS_NAMESPACE} }
spec:
  selector: { app: ${name} }
  ports: [{ port: ${port}, targetPort: ${port} }]
`;

/** Starts (or reuses) Temporal and NATS in `gh-deps` and waits until both are Ready. */
export async function ensureDeps(): Promise<void> {
  const temporal = imageOfBinary("temporal", findTemporalCli());
  const nats = imageOfBinary(
    "nats",
    execFileSync("bash", ["-c", "command -v nats-server"], { encoding: "utf8" }).trim(),
  );
  await kubectl(["create", "namespace", DEPS_NAMESPACE]);
  await kubectlOk(["apply", "-f", "-"], {
    input:
      manifest("temporal", temporal, 7233, [
        "server",
        "start-dev",
        "--headless",
        "--ip",
        "0.0.0.0",
        "--port",
        "7233",
        "--namespace",
        "default",
        "--log-level",
        "error",
      ]) +
      "---" +
      manifest("nats", nats, 4222, ["-a", "0.0.0.0", "-p", "4222"]),
  });
  for (const app of ["temporal", "nats"]) {
    await waitFor(
      `${app} Ready in ${DEPS_NAMESPACE}`,
      async () => {
        const r = await kubectlOk([
          "-n",
          DEPS_NAMESPACE,
          "get",
          "deploy",
          app,
          "-o",
          "jsonpath={.status.readyReplicas}",
        ]).catch(() => "");
        return r.trim() === "1" ? true : undefined;
      },
      180_000,
      () => kubectlOk(["-n", DEPS_NAMESPACE, "describe", "pods", "-l", `app=${app}`]).catch((e) => String(e)),
    );
  }
}
