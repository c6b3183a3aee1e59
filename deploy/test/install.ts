/**
 * What an install on the local cluster needs besides the cluster: the Gatehouse images in the node
 * (`npm run images -- --load`), a namespace enforcing PodSecurity `restricted`, a PersistentVolume
 * for the event store's claim, and the memory MCP server as a ConfigMap.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync } from "node:fs";
import { createRequire } from "node:module";
import { join } from "node:path";
import { kubectl, kubectlOk, REPO } from "./cluster.ts";
import { nodeImages } from "./deps.ts";
import { clusterCache, command as run } from "./helm.ts";

/** The chart's default image tag (its appVersion = the root package.json version). */
export const TAG = JSON.parse(readFileSync(join(REPO, "package.json"), "utf8")).version as string;

/** How the node holds an image: `registry` is the prefix to give global.image.registry ("" for docker.io). */
function imageRegistry(images: Set<string>, repository: string): string | undefined {
  for (const name of images) {
    if (name.endsWith(`/${repository}:${TAG}`)) {
      const prefix = name.slice(0, -`/${repository}:${TAG}`.length);
      return prefix === "docker.io" ? "" : prefix;
    }
  }
  return undefined;
}

/**
 * Makes sure the node has gatehouse/services and gatehouse/sandbox at TAG, building and importing them
 * (`npm run images -- --load`) when it does not.
 * @returns the registry prefix and how long the build took (ms; 0 when the node had them).
 */
export async function ensureImages(): Promise<{ registry: string; buildMs: number }> {
  let images = nodeImages();
  let buildMs = 0;
  if (
    !imageRegistry(images, "gatehouse/services") ||
    imageRegistry(images, "gatehouse/sandbox") === undefined
  ) {
    const t0 = Date.now();
    const r = await run("npm", ["run", "--silent", "images", "--", "--load"], {
      cwd: REPO,
      timeoutMs: 60 * 60_000,
    });
    if (!r.ok) throw new Error(`npm run images -- --load failed:\n${r.stdout}\n${r.stderr}`);
    buildMs = Date.now() - t0;
    images = nodeImages();
  }
  const registry = imageRegistry(images, "gatehouse/services");
  if (registry === undefined || imageRegistry(images, "gatehouse/sandbox") !== registry) {
    throw new Error(
      `the node has no gatehouse/services and gatehouse/sandbox at ${TAG} under one registry: ${[...images].join(", ")}`,
    );
  }
  return { registry, buildMs };
}

/** The StorageClass name of the test PersistentVolume (no provisioner: the PV is made here). */
export const STORAGE_CLASS = "gatehouse-test";

/** The host directory behind the test PersistentVolume of `namespace`. */
export const pvDir = (namespace: string) => join(clusterCache(), "run", "test-volumes", namespace);

/**
 * A fresh namespace enforcing PodSecurity `restricted`, a hostPath PersistentVolume for the event
 * store's claim (owned by uid 65532, the images' user), and the ConfigMap `mcp-memory` holding the
 * memory MCP server bundled into one file with esbuild.
 */
export async function prepareNamespace(namespace: string): Promise<void> {
  await kubectl(["delete", "namespace", namespace, "--wait=true", "--ignore-not-found"], {
    timeoutMs: 300_000,
  });
  await kubectl(["delete", "pv", `${namespace}-data`, "--ignore-not-found"]);
  await kubectlOk(["create", "namespace", namespace]);
  await kubectlOk([
    "label",
    "namespace",
    namespace,
    "pod-security.kubernetes.io/enforce=restricted",
    "pod-security.kubernetes.io/warn=restricted",
  ]);
  const dir = pvDir(namespace);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  execFileSync("chown", ["65532:65532", dir]);
  await kubectlOk(["apply", "-f", "-"], {
    input: JSON.stringify({
      apiVersion: "v1",
      kind: "PersistentVolume",
      metadata: { name: `${namespace}-data` },
      spec: {
        capacity: { storage: "1Gi" },
        accessModes: ["ReadWriteOnce"],
        persistentVolumeReclaimPolicy: "Retain",
        storageClassName: STORAGE_CLASS,
        claimRef: { namespace, name: "gh-gatehouse-data" },
        hostPath: { path: dir, type: "Directory" },
      },
    }),
  });
  const server = bundleMemoryServer();
  const cm = await kubectl([
    "-n",
    namespace,
    "create",
    "configmap",
    "mcp-memory",
    `--from-file=server.mjs=${server}`,
  ]);
  rmSync(server, { force: true });
  if (!cm.ok) throw new Error(`cannot create the mcp-memory ConfigMap: ${cm.stderr}`);
}

/** Bundles @modelcontextprotocol/server-memory into one ES module (≈ 720 KiB: fits a ConfigMap); returns its path. */
function bundleMemoryServer(): string {
  const require = createRequire(import.meta.url);
  const entry = require.resolve("@modelcontextprotocol/server-memory/dist/index.js");
  const out = join(clusterCache(), "run", "test-volumes", "server-memory.mjs");
  execFileSync(
    join(REPO, "node_modules", ".bin", "esbuild"),
    [
      entry,
      "--bundle",
      "--platform=node",
      "--format=esm",
      "--minify",
      `--outfile=${out}`,
      "--banner:js=import{createRequire as __cr}from'node:module';const require=__cr(import.meta.url);",
      "--log-level=warning",
    ],
    { stdio: "pipe" },
  );
  return out;
}

/** Removes what prepareNamespace made (the namespace, the PV and its directory). */
export async function cleanNamespace(namespace: string): Promise<void> {
  await kubectl(["delete", "namespace", namespace, "--wait=true", "--ignore-not-found"], {
    timeoutMs: 300_000,
  });
  await kubectl(["delete", "pv", `${namespace}-data`, "--ignore-not-found"]);
  rmSync(pvDir(namespace), { recursive: true, force: true });
}
