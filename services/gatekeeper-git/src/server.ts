/**
 * gRPC handlers of `gatehouse.v1.Gatekeeper` for git: ResolveResource, OpenSession (capnweb via
 * the kit), ApplyAction and ApplyActions (a run of them, in order), ActionRejected (drops the write
 * and those built on it from the overlay), PrepareRevert (revert.ts) and CheckObserver
 * (observers.ts, strategy B).
 */
import {
  type ApprovalQueue,
  applyRunHandler,
  applyStreamHandler,
  checkOpenFields,
  serveSession,
  unaryHandler,
} from "@gatehouse/gatekeeper-kit";
import type { GatekeeperServer, ResolveResourceRequest, ResolveResourceResponse } from "@gatehouse/proto";
import type { Logger } from "pino";
import { GIT_ACTION_KINDS } from "./action-kinds.ts";
import { applyAction } from "./apply.ts";
import { gitRunUnits } from "./apply-run.ts";
import { Binding, type Limits } from "./binding.ts";
import { GitBindingService } from "./binding-service.ts";
import { generateGitDts } from "./dts.ts";
import { InvalidRequest, InvalidResourceUrl } from "./errors.ts";
import { GitFailed, gitText } from "./git.ts";
import type { GitGatekeeperMetrics } from "./metrics.ts";
import { checkObserver } from "./observers.ts";
import { gitWhy } from "./publish.ts";
import { type GitResource, parseGitResource, type ResourcePolicy } from "./resource-url.ts";
import { restoreOnce } from "./restore.ts";
import { prepareRevert } from "./revert.ts";
import { dropWrite, type GitState } from "./state.ts";
import { GIT_METHODS, GitRepoTarget } from "./target.ts";
import { upstreamFor } from "./upstream.ts";

export interface ServerDeps {
  policy: ResourcePolicy;
  limits: Limits;
  approval: ApprovalQueue;
  state: GitState;
  logger: Logger;
  metrics: GitGatekeeperMetrics;
}

/**
 * Parses the URL and checks the repository opens (a remote one is fetched into its mirror).
 * @throws InvalidResourceUrl (not a repository, remote unreachable or credentials refused).
 */
export async function openResource(
  url: string,
  deps: Pick<ServerDeps, "policy" | "state">,
): Promise<GitResource> {
  const resource = parseGitResource(url, deps.policy);
  if (resource.remote) {
    try {
      await upstreamFor(resource, deps.state.fetches).refresh();
    } catch (e) {
      if (!(e instanceof GitFailed)) throw e;
      throw new InvalidResourceUrl(
        `the remote repository could not be fetched with the gatekeeper's credentials (${gitWhy(e)}); check the URL and GATEKEEPER_GIT_REMOTES`,
      );
    }
    return resource;
  }
  try {
    await gitText(resource.gitDir, ["rev-parse", "--git-dir"]);
  } catch {
    throw new InvalidResourceUrl("the path of the git+file URL is not a git repository");
  }
  return resource;
}

/**
 * ResolveResource: the binding name (default REPO), d.ts, methods, normalized URL and action kinds.
 * With `req.checkOnly` the URL is only parsed against the policy (allowed roots and prefixes,
 * fragment): no repository is opened or fetched, and dts, methods and action kinds are empty.
 */
export async function resolveResource(
  req: ResolveResourceRequest,
  deps: ServerDeps,
): Promise<ResolveResourceResponse> {
  const binding = req.name || "REPO";
  if (!/^[A-Z][A-Z0-9_]*$/.test(binding))
    throw new InvalidRequest(`name "${binding.slice(0, 40)}" must match /^[A-Z][A-Z0-9_]*$/`);
  if (req.checkOnly) {
    const parsed = parseGitResource(req.url, deps.policy);
    return { binding, trust: "byo", dts: "", methods: [], url: parsed.normalizedUrl, actionKinds: undefined };
  }
  const resource = await openResource(req.url, deps);
  return {
    binding,
    trust: "byo",
    dts: generateGitDts(binding, resource),
    methods: [...GIT_METHODS],
    url: resource.normalizedUrl,
    actionKinds: { kinds: GIT_ACTION_KINDS.map((k) => ({ ...k })) },
  };
}

export function createGatekeeperServer(deps: ServerDeps): GatekeeperServer {
  return {
    resolveResource: unaryHandler("ResolveResource", deps, (req) => resolveResource(req, deps)),
    openSession: (call) => {
      deps.metrics.rpcs.inc({ method: "OpenSession", code: "STARTED" });
      serveSession(call, {
        logger: deps.logger,
        onSessionChange: (d) => deps.metrics.sessions.inc(d),
        noSuchMethodHint: `call one of ${GIT_METHODS.join(", ")} (see the binding's .d.ts)`,
        methodsOnFailure: GIT_METHODS,
        async start(open) {
          checkOpenFields(open);
          const resource = await openResource(open.url, deps);
          const state = deps.state.binding(open.workspaceId, open.binding);
          await restoreOnce(state, deps.approval, open.callerToken);
          const svc = new GitBindingService(
            new Binding(
              {
                workspaceId: open.workspaceId,
                binding: open.binding,
                callerToken: open.callerToken,
                resource,
              },
              state,
              deps.approval,
              deps.limits,
              upstreamFor(resource, deps.state.fetches),
              deps.policy.remotes,
            ),
          );
          return new GitRepoTarget(svc);
        },
      });
    },
    // Streams `running` while the commit or push is in flight, then the outcome (gatekeeper.proto).
    applyAction: applyStreamHandler(deps, (req, { deadline }) =>
      applyAction(req, { policy: deps.policy, state: deps.state, logger: deps.logger }, deadline),
    ),
    // A run in order, stopping at the first failure; consecutive commits on one branch are
    // written with one ref update (apply-run.ts).
    applyActions: applyRunHandler(
      deps,
      (req, { deadline }) =>
        applyAction(req, { policy: deps.policy, state: deps.state, logger: deps.logger }, deadline),
      undefined,
      gitRunUnits({ policy: deps.policy, state: deps.state, logger: deps.logger }),
    ),
    actionRejected: unaryHandler("ActionRejected", deps, async (req) => {
      const dropped = dropWrite(
        deps.state.binding(req.workspaceId, req.binding),
        req.localId,
        "was rejected",
      );
      deps.logger.info(
        { event: "action.rejected", actionId: req.actionId, dropped },
        "pending commits dropped",
      );
      return {};
    }),
    prepareRevert: unaryHandler("PrepareRevert", deps, (req) =>
      prepareRevert(req, { policy: deps.policy, state: deps.state, limits: deps.limits }),
    ),
    checkObserver: unaryHandler("CheckObserver", deps, async (req) => {
      const res = await checkObserver(req, deps.policy);
      deps.logger.info(
        { event: "observer.checked", observer: req.observer, allowed: res.allowed },
        "observer checked (strategy B)",
      );
      return res;
    }),
  };
}
