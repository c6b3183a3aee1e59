/**
 * Library entry of the git gatekeeper: serves gRPC `gatehouse.v1.Gatekeeper` for local git
 * repositories under admin-allowed roots and remote repositories under admin-allowed prefixes
 * (with credentials only the gatekeeper holds), calling the approval service's `ApprovalQueue`.
 *
 * ```ts
 * const gk = await startGitGatekeeper({
 *   allowedRoots: ["/srv/repos"], remotes: loadRemotesFile("/etc/gatekeeper-git/remotes.yaml"),
 *   cacheDir: "/var/cache/gatekeeper-git", approvalAddress: "127.0.0.1:7002", host: "127.0.0.1", port: 0, logger: pino(),
 * });
 * ```
 */

import { tmpdir } from "node:os";
import { join } from "node:path";
import { type GatekeeperAddress, type RunningGatekeeper, startGatekeeper } from "@gatehouse/gatekeeper-kit";
import { DEFAULT_LIMITS, type Limits } from "./binding.ts";
import { createMetrics, type GitGatekeeperMetrics } from "./metrics.ts";
import type { RemoteRule } from "./remotes.ts";
import { createGatekeeperServer } from "./server.ts";
import { GitState } from "./state.ts";

export {
  DEFAULT_LIMITS,
  type DiffPage,
  type FileChunk,
  type FilePage,
  type Limits,
  type LogPage,
  type WriteResult,
} from "./binding-service.ts";
export { generateGitDts } from "./dts.ts";
export * from "./errors.ts";
export {
  createRemotes,
  loadRemotesFile,
  type RemoteRule,
  type RemotesInput,
  RemotesInvalid,
} from "./remotes.ts";
export { type GitResource, parseGitResource, type ResourcePolicy } from "./resource-url.ts";
export type { CommitPayload, CreateBranchPayload, FileChange, PushPayload, WritePayload } from "./state.ts";
export { GitRepoTarget } from "./target.ts";

export interface GitGatekeeperOptions extends GatekeeperAddress {
  /** Absolute directories under which local repositories may be served. */
  allowedRoots: readonly string[];
  /** Remote prefixes an administrator allows, with credentials (default: none). */
  remotes?: readonly RemoteRule[];
  /** Absolute directory for mirrors of remote repositories (default `<tmpdir>/gatehouse-gatekeeper-git`). */
  cacheDir?: string;
  /** Minimum time between fetches of a remote for reads, ms (default 2000; applies always fetch). */
  fetchIntervalMs?: number;
  metrics?: GitGatekeeperMetrics;
  /**
   * Page sizes and byte limits (default DEFAULT_LIMITS: 1000 files / 100 commits per page, 1 MiB files, 64 KiB
   * diffs, replies sized for the sandbox runners' default 1 MiB frame cap: set `maxFrameBytes` to theirs).
   */
  limits?: Partial<Limits>;
}

/** A running gatekeeper: `port`, `metrics`, `healthy()` (true until close starts), `close()`. */
export type GitGatekeeper = RunningGatekeeper<GitGatekeeperMetrics>;

/** Starts the gRPC server. @throws Error when the address cannot be bound or a root / the cache dir is not absolute. */
export async function startGitGatekeeper(opts: GitGatekeeperOptions): Promise<GitGatekeeper> {
  for (const r of opts.allowedRoots) {
    if (!r.startsWith("/")) throw new Error(`allowed root "${r}" must be an absolute path`);
  }
  if (opts.cacheDir !== undefined && !opts.cacheDir.startsWith("/")) {
    throw new Error(`cache directory "${opts.cacheDir}" must be an absolute path`);
  }
  return startGatekeeper({
    name: "gatekeeper-git",
    approvalAddress: opts.approvalAddress,
    host: opts.host,
    port: opts.port,
    logger: opts.logger,
    metrics: opts.metrics ?? createMetrics(),
    build: ({ approval, logger, metrics }) => ({
      impl: createGatekeeperServer({
        policy: {
          allowedRoots: opts.allowedRoots,
          remotes: opts.remotes ?? [],
          cacheDir: opts.cacheDir ?? join(tmpdir(), "gatehouse-gatekeeper-git"),
        },
        limits: { ...DEFAULT_LIMITS, ...opts.limits },
        approval,
        state: new GitState(opts.fetchIntervalMs),
        logger,
        metrics,
      }),
    }),
  });
}
