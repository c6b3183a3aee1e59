/**
 * What the two images are: names, tags, the Debian packages of their base, entrypoint, user and
 * environment. One source for the build (build.ts), its tests and deploy/images/README.md's tables.
 */
import { readFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

/** Root of the checkout. */
export const REPO_ROOT = join(dirname(fileURLToPath(import.meta.url)), "..", "..");

/** The version images are tagged with: the root package.json's `version`, e.g. "0.1.0". */
export const VERSION: string = (
  JSON.parse(readFileSync(join(REPO_ROOT, "package.json"), "utf8")) as { version: string }
).version;

/** uid and gid every image runs as ("nonroot"; never root). */
export const NONROOT_UID = 65532;

/** The components of the services image: `gatehouse-service <component>` (args: [component]). */
export const SERVICE_COMPONENTS = [
  "kernel",
  "approval",
  "worker",
  "gateway",
  "gatekeeper-mcp",
  "gatekeeper-git",
  "gatekeeper-postgres",
] as const;
export type ServiceComponent = (typeof SERVICE_COMPONENTS)[number];

/** One image to build. */
export interface ImageSpec {
  /** Short name: "services" or "sandbox" (also the OCI archive's file name). */
  kind: "services" | "sandbox";
  /** Repository as Pods name it, e.g. "gatehouse/services" (containerd: docker.io/gatehouse/services). */
  repository: string;
  /** Debian packages whose dependency closure forms the base (extracted, no maintainer scripts). */
  debianPackages: readonly string[];
  /** Whether npm (and npx) from the build machine's Node are added (stdio MCP servers). */
  npm: boolean;
  /** Process entrypoint (argv before the Pod's args). */
  entrypoint: readonly string[];
  /** Default args. */
  cmd: readonly string[];
  /** Image environment, KEY=VALUE. */
  env: readonly string[];
}

const COMMON_ENV = ["PATH=/usr/local/bin:/usr/bin:/bin", "HOME=/tmp", "NODE_ENV=production"];

/** The services image: every service, a command per component. */
export const SERVICES_IMAGE: ImageSpec = {
  kind: "services",
  repository: "gatehouse/services",
  // git + ssh for gatekeeper-git; dash as /bin/sh (git runs hooks, aliases and GIT_SSH_COMMAND with it).
  debianPackages: ["libc6", "libstdc++6", "git", "openssh-client", "dash", "ca-certificates"],
  npm: true,
  entrypoint: ["/usr/bin/node", "--no-node-snapshot", "/app/gatehouse-service.mjs"],
  cmd: ["--help"],
  env: [
    ...COMMON_ENV,
    "GATEHOUSE_DATA_DIR=/data",
    "GATEWAY_WEB_DIST=/app/web",
    "WORKER_WORKFLOW_BUNDLE=/app/worker/workflow-bundle.js",
    "WORKER_WORKFLOW_BUNDLE_TRACED=/app/worker/workflow-bundle-traced.js",
    "WORKER_AGENT_WORKFLOW_BUNDLE=/app/worker/agent-workflow-bundle.js",
  ],
};

/** The sandbox image: the sandbox runner and its isolate host. */
export const SANDBOX_IMAGE: ImageSpec = {
  kind: "sandbox",
  repository: "gatehouse/sandbox",
  debianPackages: ["libc6", "libstdc++6"],
  npm: false,
  entrypoint: ["/usr/bin/node", "--no-node-snapshot", "/app/runner/main.js"],
  cmd: [],
  env: [...COMMON_ENV],
};

export const IMAGES = [SERVICES_IMAGE, SANDBOX_IMAGE] as const;

/** Tags every image gets: the version and "dev". */
export const TAGS = [VERSION, "dev"] as const;

/**
 * The image cache outside the checkout (agreed layout):
 * `${GATEHOUSE_CACHE_DIR:-${XDG_CACHE_HOME:-$HOME/.cache}/gatehouse}/cluster/images`.
 */
export function imageCacheDir(env: NodeJS.ProcessEnv = process.env): string {
  const base =
    env.GATEHOUSE_CACHE_DIR || join(env.XDG_CACHE_HOME || join(env.HOME ?? "/root", ".cache"), "gatehouse");
  return join(base, "cluster", "images");
}

/** The cluster's tool folder ($CACHE/bin: umoci, ctr, …). */
export function clusterBinDir(env: NodeJS.ProcessEnv = process.env): string {
  return join(imageCacheDir(env), "..", "bin");
}
