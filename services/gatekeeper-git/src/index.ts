/**
 * Library entry of the git gatekeeper: serves gRPC `gatehouse.v1.Gatekeeper` for local git
 * repositories under admin-allowed roots, calling the approval service's `ApprovalQueue`.
 *
 * ```ts
 * const gk = await startGitGatekeeper({
 *   allowedRoots: ["/srv/repos"], approvalAddress: "127.0.0.1:7002", host: "127.0.0.1", port: 0, logger: pino(),
 * });
 * ```
 */
import { type ApprovalQueue, connectApprovalQueue } from "@gatehouse/gatekeeper-kit";
import { GatekeeperService } from "@gatehouse/proto";
import { listenGrpc, stopGrpc } from "@gatehouse/service-kit";
import { Server } from "@grpc/grpc-js";
import type { Logger } from "pino";
import { DEFAULT_LIMITS, type Limits } from "./binding-service.ts";
import { createMetrics, type GitGatekeeperMetrics } from "./metrics.ts";
import { createGatekeeperServer } from "./server.ts";
import { GitState } from "./state.ts";

export {
  type CommitResult,
  DEFAULT_LIMITS,
  type FilePage,
  type Limits,
  type LogPage,
} from "./binding-service.ts";
export { generateGitDts } from "./dts.ts";
export * from "./errors.ts";
export { type GitResource, parseGitResource } from "./resource-url.ts";
export type { CommitPayload, FileChange } from "./state.ts";
export { GitRepoTarget } from "./target.ts";

export interface GitGatekeeperOptions {
  /** Absolute directories under which local repositories may be served. */
  allowedRoots: readonly string[];
  /** "host:port" of the approval service's ApprovalQueue. */
  approvalAddress: string;
  host: string;
  /** TCP port; 0 picks a free one. */
  port: number;
  logger: Logger;
  metrics?: GitGatekeeperMetrics;
  /** Page sizes and byte limits (default DEFAULT_LIMITS: 1000 files / 100 commits per page, 1 MiB files, 64 KiB diffs). */
  limits?: Partial<Limits>;
}

export interface GitGatekeeper {
  port: number;
  metrics: GitGatekeeperMetrics;
  healthy(): boolean;
  close(): Promise<void>;
}

/** Starts the gRPC server. @throws Error when the address cannot be bound or a root is not absolute. */
export async function startGitGatekeeper(opts: GitGatekeeperOptions): Promise<GitGatekeeper> {
  for (const r of opts.allowedRoots) {
    if (!r.startsWith("/")) throw new Error(`allowed root "${r}" must be an absolute path`);
  }
  const logger = opts.logger.child({ component: "gatekeeper-git" });
  const metrics = opts.metrics ?? createMetrics();
  const approval: ApprovalQueue = connectApprovalQueue(opts.approvalAddress);
  const server = new Server();
  server.addService(
    GatekeeperService,
    createGatekeeperServer({
      allowedRoots: opts.allowedRoots,
      limits: { ...DEFAULT_LIMITS, ...opts.limits },
      approval,
      state: new GitState(),
      logger,
      metrics,
    }),
  );
  const port = await listenGrpc(server, opts.host, opts.port);
  logger.info({ event: "started", port }, "gatekeeper-git listening");
  let closing = false;
  return {
    port,
    metrics,
    healthy: () => !closing,
    async close() {
      if (closing) return;
      closing = true;
      await stopGrpc(server);
      approval.close();
      logger.info({ event: "stopped" }, "gatekeeper-git stopped");
    },
  };
}
