/**
 * gRPC handlers of `gatehouse.v1.Gatekeeper` for git: ResolveResource, OpenSession (capnweb via
 * the kit), ApplyAction and ApplyActions (a run of them, in order), ActionRejected (drops the write
 * and those built on it from the overlay), PrepareRevert (revert.ts) and CheckObserver
 * (observers.ts, strategy B).
 */
import {
  type ApprovalQueue,
  bindingNameOf,
  checkOpenFields,
  gatekeeperHandlers,
} from "@gatehouse/gatekeeper-kit";
import type { GatekeeperServer, ResolveResourceRequest, ResolveResourceResponse } from "@gatehouse/proto";
import type { Logger } from "pino";
import { GIT_ACTION_KINDS } from "./action-kinds.ts";
import { applyAction } from "./apply.ts";
import { gitRunUnits } from "./apply-run.ts";
import { Binding, type Limits } from "./binding.ts";
import { GitBindingService } from "./binding-service.ts";
import { generateGitDts } from "./dts.ts";
import { InvalidResourceUrl } from "./errors.ts";
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
  const binding = bindingNameOf(req, "REPO");
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

/** Builds the Gatekeeper service implementation: git's parts in the kit's `gatekeeperHandlers`. */
export function createGatekeeperServer(deps: ServerDeps): GatekeeperServer {
  const applyDeps = { policy: deps.policy, state: deps.state, logger: deps.logger };
  return gatekeeperHandlers(deps, {
    resolveResource: (req) => resolveResource(req, deps),
    session: {
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
    },
    // A commit or push; in a run, consecutive commits on one branch are written with one ref
    // update (apply-run.ts).
    apply: (req, { deadline }) => applyAction(req, applyDeps, deadline),
    runUnits: gitRunUnits(applyDeps),
    dropRejected: (req) =>
      dropWrite(deps.state.binding(req.workspaceId, req.binding), req.localId, "was rejected"),
    prepareRevert: (req) =>
      prepareRevert(req, { policy: deps.policy, state: deps.state, limits: deps.limits }),
    // Strategy B (observers.ts).
    checkObserver: (req) => checkObserver(req, deps.policy),
  });
}
