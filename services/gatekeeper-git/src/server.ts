/**
 * gRPC handlers of `gatehouse.v1.Gatekeeper` for git: ResolveResource, OpenSession (capnweb via
 * the kit), ApplyAction, ActionRejected (drops the commit and those built on it from the overlay).
 */
import {
  type ApprovalQueue,
  checkOpenFields,
  GatekeeperError,
  serveSession,
  toServiceError,
} from "@gatehouse/gatekeeper-kit";
import type { GatekeeperServer, ResolveResourceRequest, ResolveResourceResponse } from "@gatehouse/proto";
import { type handleUnaryCall, status } from "@grpc/grpc-js";
import type { Logger } from "pino";
import { applyAction } from "./apply.ts";
import { GitBindingService, type Limits } from "./binding-service.ts";
import { generateGitDts } from "./dts.ts";
import { InvalidRequest, InvalidResourceUrl } from "./errors.ts";
import { gitText } from "./git.ts";
import type { GitGatekeeperMetrics } from "./metrics.ts";
import { type GitResource, parseGitResource } from "./resource-url.ts";
import type { GitState } from "./state.ts";
import { GIT_METHODS, GitRepoTarget } from "./target.ts";

export interface ServerDeps {
  allowedRoots: readonly string[];
  limits: Limits;
  approval: ApprovalQueue;
  state: GitState;
  logger: Logger;
  metrics: GitGatekeeperMetrics;
}

/** Parses the URL and checks the repository opens. */
export async function openResource(url: string, allowedRoots: readonly string[]): Promise<GitResource> {
  const resource = parseGitResource(url, allowedRoots);
  try {
    await gitText(resource.gitDir, ["rev-parse", "--git-dir"]);
  } catch {
    throw new InvalidResourceUrl("the path of the git+file URL is not a git repository");
  }
  return resource;
}

/** ResolveResource: the binding name (default REPO), d.ts, methods and normalized URL. */
export async function resolveResource(
  req: ResolveResourceRequest,
  deps: ServerDeps,
): Promise<ResolveResourceResponse> {
  const resource = await openResource(req.url, deps.allowedRoots);
  const binding = req.name || "REPO";
  if (!/^[A-Z][A-Z0-9_]*$/.test(binding))
    throw new InvalidRequest(`name "${binding.slice(0, 40)}" must match /^[A-Z][A-Z0-9_]*$/`);
  return {
    binding,
    trust: "byo",
    dts: generateGitDts(binding, resource),
    methods: [...GIT_METHODS],
    url: resource.normalizedUrl,
  };
}

function unary<Req, Res>(
  method: string,
  deps: ServerDeps,
  fn: (req: Req) => Promise<Res>,
): handleUnaryCall<Req, Res> {
  return (call, callback) => {
    const stop = deps.metrics.rpcSeconds.startTimer({ method });
    fn(call.request).then(
      (res) => {
        stop();
        deps.metrics.rpcs.inc({ method, code: "OK" });
        callback(null, res);
      },
      (err: unknown) => {
        stop();
        const se = toServiceError(err);
        deps.metrics.rpcs.inc({ method, code: status[se.code ?? status.INTERNAL] ?? "UNKNOWN" });
        if (!(err instanceof GatekeeperError)) {
          const e = err as Error;
          deps.logger.error(
            { component: "grpc", event: "rpc.internal_error", method, errName: e?.name },
            "unexpected error",
          );
        }
        callback(se);
      },
    );
  };
}

export function createGatekeeperServer(deps: ServerDeps): GatekeeperServer {
  return {
    resolveResource: unary("ResolveResource", deps, (req) => resolveResource(req, deps)),
    openSession: (call) => {
      deps.metrics.rpcs.inc({ method: "OpenSession", code: "STARTED" });
      serveSession(call, {
        logger: deps.logger,
        onSessionChange: (d) => deps.metrics.sessions.inc(d),
        noSuchMethodHint: `call one of ${GIT_METHODS.join(", ")} (see the binding's .d.ts)`,
        async start(open) {
          checkOpenFields(open);
          const resource = await openResource(open.url, deps.allowedRoots);
          const svc = new GitBindingService(
            { workspaceId: open.workspaceId, binding: open.binding, callerToken: open.callerToken, resource },
            deps.state.binding(open.workspaceId, open.binding),
            deps.approval,
            deps.limits,
          );
          return new GitRepoTarget(svc);
        },
      });
    },
    applyAction: unary("ApplyAction", deps, (req) => applyAction(req, deps)),
    actionRejected: unary("ActionRejected", deps, async (req) => {
      const dropped = deps.state.binding(req.workspaceId, req.binding).overlay.drop(req.localId);
      deps.logger.info(
        { event: "action.rejected", actionId: req.actionId, dropped },
        "pending commits dropped",
      );
      return {};
    }),
  };
}
