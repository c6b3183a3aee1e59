/**
 * Process entry of gatekeeper-git. Environment (validated with zod at start-up):
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

import { DEFAULT_MAX_FRAME_BYTES, MAX_MAX_FRAME_BYTES, MIN_MAX_FRAME_BYTES } from "@gatehouse/gatekeeper-kit";
import { hostPort, parseEnv, splitHostPort, startOpsHttp, stopOnSignals } from "@gatehouse/service-kit";
import { startServiceProcessTracing, stopTracing } from "@gatehouse/telemetry";
import { pino } from "pino";
import { z } from "zod";
import { loadRemotesFile, type RemoteRule, startGitGatekeeper } from "./index.ts";

const HostPort = hostPort("127.0.0.1:7004");

const Env = z.object({
  GATEKEEPER_GIT_ADDR: HostPort.default("127.0.0.1:7004"),
  APPROVAL_ADDRESS: HostPort,
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
  GATEKEEPER_GIT_METRICS_ADDR: HostPort.default("127.0.0.1:9404"),
  // The sandbox runners' frame cap: set it to the same value as theirs.
  SANDBOX_MAX_FRAME_BYTES: z.coerce
    .number()
    .int()
    .min(MIN_MAX_FRAME_BYTES)
    .max(MAX_MAX_FRAME_BYTES)
    .default(DEFAULT_MAX_FRAME_BYTES),
  LOG_LEVEL: z.enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"]).default("info"),
});

async function main(): Promise<void> {
  let env: z.output<typeof Env>;
  try {
    env = parseEnv(Env, process.env, "gatekeeper-git");
  } catch (err) {
    console.error((err as Error).message);
    process.exit(2);
  }
  const logger = pino({ level: env.LOG_LEVEL, base: { service: "gatekeeper-git" } });
  await startServiceProcessTracing("gatekeeper-git", logger);
  const { host, port } = splitHostPort(env.GATEKEEPER_GIT_ADDR);
  const allowedRoots = env.GATEKEEPER_GIT_ALLOWED_ROOTS.split(":");
  let remotes: RemoteRule[] = [];
  if (env.GATEKEEPER_GIT_REMOTES) {
    try {
      remotes = loadRemotesFile(env.GATEKEEPER_GIT_REMOTES);
    } catch (e) {
      console.error(`gatekeeper-git: ${(e as Error).message}`);
      process.exit(2);
    }
  }
  const gk = await startGitGatekeeper({
    allowedRoots,
    remotes,
    ...(env.GATEKEEPER_GIT_CACHE_DIR ? { cacheDir: env.GATEKEEPER_GIT_CACHE_DIR } : {}),
    approvalAddress: env.APPROVAL_ADDRESS,
    host,
    port,
    logger,
    limits: { maxFrameBytes: env.SANDBOX_MAX_FRAME_BYTES },
  });
  const ops = splitHostPort(env.GATEKEEPER_GIT_METRICS_ADDR);
  const http = await startOpsHttp({ ...ops, registry: gk.metrics.registry, healthy: gk.healthy });
  logger.info(
    {
      event: "config",
      grpc: `${host}:${gk.port}`,
      approval: env.APPROVAL_ADDRESS,
      allowedRoots,
      remotes: remotes.map((r) => ({ prefix: r.urlPrefix, auth: r.auth.kind, restricted: r.restricted })),
      ops: `${ops.host}:${http.port}`,
      maxFrameBytes: env.SANDBOX_MAX_FRAME_BYTES,
    },
    "gatekeeper-git configured",
  );
  stopOnSignals(
    logger,
    () => gk.close(),
    () => http.close(),
    () => stopTracing(),
  );
}

main().catch((err: unknown) => {
  console.error(`gatekeeper-git failed to start: ${(err as Error).message}`);
  process.exit(1);
});
