/**
 * Process entry of gatekeeper-git (the kit's `runGatekeeperProcess`). Environment (validated with
 * zod at start-up):
 * - GATEKEEPER_GIT_ADDR           host:port of the gRPC server (default 127.0.0.1:7004)
 * - APPROVAL_ADDRESS              host:port of the approval service (required)
 * - GATEKEEPER_GIT_ALLOWED_ROOTS  colon-separated absolute directories holding servable repositories (required)
 * - GATEKEEPER_GIT_REMOTES        path of the YAML file of allowed remotes and their credentials
 *                                 (remotes.ts; optional: without it no remote repository is served)
 * - GATEKEEPER_GIT_CACHE_DIR      absolute directory for mirrors of remote repositories
 *                                 (default <tmpdir>/gatehouse-gatekeeper-git; use a volume in a cluster)
 * - GATEKEEPER_GIT_METRICS_ADDR   host:port of /metrics and /healthz (default 127.0.0.1:9404)
 * - SANDBOX_MAX_FRAME_BYTES       the sandbox runners' frame cap, bytes (default 1048576, as theirs); every
 *                                 reply is sized to fit one frame under it: set it to the runners' value
 * - LOG_LEVEL                     pino level (default info)
 */

import { ConfigurationRefused, runGatekeeperProcess, sandboxMaxFrameBytes } from "@gatehouse/gatekeeper-kit";
import { z } from "zod";
import { loadRemotesFile, type RemoteRule, startGitGatekeeper } from "./index.ts";

runGatekeeperProcess({
  name: "gatekeeper-git",
  envPrefix: "GATEKEEPER_GIT",
  addr: "127.0.0.1:7004",
  metricsAddr: "127.0.0.1:9404",
  env: {
    GATEKEEPER_GIT_ALLOWED_ROOTS: z
      .string()
      .min(1, "must list the absolute directories repositories may live under, separated by ':'")
      .refine(
        (v) => v.split(":").every((r) => r.startsWith("/")),
        "must be absolute directories separated by ':', e.g. /srv/repos:/data/git",
      ),
    GATEKEEPER_GIT_REMOTES: z.string().min(1).optional(),
    GATEKEEPER_GIT_CACHE_DIR: z
      .string()
      .startsWith("/", "must be an absolute directory, e.g. /var/cache/gatekeeper-git")
      .optional(),
    // The sandbox runners' frame cap: set it to the same value as theirs.
    SANDBOX_MAX_FRAME_BYTES: sandboxMaxFrameBytes,
  },
  async start(env, base) {
    const allowedRoots = env.GATEKEEPER_GIT_ALLOWED_ROOTS.split(":");
    let remotes: RemoteRule[] = [];
    if (env.GATEKEEPER_GIT_REMOTES) {
      try {
        remotes = loadRemotesFile(env.GATEKEEPER_GIT_REMOTES);
      } catch (e) {
        throw new ConfigurationRefused((e as Error).message);
      }
    }
    const gatekeeper = await startGitGatekeeper({
      ...base,
      allowedRoots,
      remotes,
      ...(env.GATEKEEPER_GIT_CACHE_DIR ? { cacheDir: env.GATEKEEPER_GIT_CACHE_DIR } : {}),
      limits: { maxFrameBytes: env.SANDBOX_MAX_FRAME_BYTES },
    });
    return {
      gatekeeper,
      config: {
        allowedRoots,
        remotes: remotes.map((r) => ({ prefix: r.urlPrefix, auth: r.auth.kind, restricted: r.restricted })),
        maxFrameBytes: env.SANDBOX_MAX_FRAME_BYTES,
      },
    };
  },
});
