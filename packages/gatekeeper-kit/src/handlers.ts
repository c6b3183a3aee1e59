/**
 * The `gatehouse.v1.Gatekeeper` implementation every gatekeeper shares, around the parts that are
 * its own: each unary call goes through `unaryHandler` (metrics, error mapping, message-free
 * logging), OpenSession is counted and served by `serveSession` (the sessions gauge follows it),
 * ApplyAction and ApplyActions share one per-action apply, ActionRejected and CheckObserver are
 * logged the same way everywhere.
 *
 * ```ts
 * const impl = gatekeeperHandlers(deps, {
 *   resolveResource: (req) => resolveResource(req, deps),
 *   session: { start: async (open) => new RepoTarget(open), methodsOnFailure: METHODS },
 *   apply: (req, ctx) => applyAction(req, deps, ctx),
 *   dropRejected: (req) => dropWrite(state.binding(req.workspaceId, req.binding), req.localId, "was rejected"),
 *   prepareRevert: (req) => prepareRevert(req, deps),
 *   checkObserver: (req) => checkObserver(req, deps),
 * });
 * ```
 */

import type { ApplyContext, ApplyLogger, RunUnits } from "@gatehouse/apply-protocol";
import type {
  ActionRejectedRequest,
  ApplyActionRequest,
  ApplyActionResponse,
  CheckObserverRequest,
  CheckObserverResponse,
  GatekeeperServer,
  PrepareRevertRequest,
  PrepareRevertResponse,
  ResolveResourceRequest,
  ResolveResourceResponse,
} from "@gatehouse/proto";
import { applyRunHandler, applyStreamHandler } from "./apply.ts";
import { InvalidRequest } from "./errors.ts";
import type { KitLogger } from "./logger.ts";
import type { GatekeeperMetrics } from "./metrics.ts";
import { BINDING_NAME } from "./session-open.ts";
import { type SessionHandlers, serveSession } from "./session-server.ts";
import { unaryHandler } from "./unary.ts";

/** What the shared handlers log and count into. */
export interface HandlerDeps {
  logger: KitLogger & ApplyLogger;
  metrics: GatekeeperMetrics;
}

/** The parts of a Gatekeeper service that are the gatekeeper's own. */
export interface GatekeeperParts {
  /** ResolveResource: parse and check the URL, describe the binding (see `bindingNameOf`). */
  resolveResource(req: ResolveResourceRequest): Promise<ResolveResourceResponse>;
  /**
   * OpenSession: the session's main object and hints (`serveSession`); the kit adds the logger
   * and the sessions gauge. `logger` here overrides the session logger (e.g. a child).
   */
  session: Omit<SessionHandlers, "onSessionChange">;
  /** Performs one approved action once (ApplyAction, and each action of ApplyActions). */
  apply(req: ApplyActionRequest, ctx: ApplyContext): Promise<ApplyActionResponse>;
  /** Optional grouping of consecutive actions of a run into one external call. */
  runUnits?: RunUnits;
  /**
   * ActionRejected: drops the rejected write and those built on it from the overlay; returns the
   * local ids dropped (logged as `action.rejected`). Absent: the gatekeeper keeps no overlay and
   * acknowledging is all there is to do.
   */
  dropRejected?(req: ActionRejectedRequest): readonly string[];
  /** PrepareRevert: the inverse action, or a GatekeeperError saying why there is none. */
  prepareRevert(req: PrepareRevertRequest): Promise<PrepareRevertResponse>;
  /** CheckObserver: whether the observer may watch (logged as `observer.checked`). */
  checkObserver(req: CheckObserverRequest): Promise<CheckObserverResponse>;
}

/**
 * The binding name a ResolveResource asks for, or `fallback` (e.g. "REPO") when it names none.
 * @throws InvalidRequest when the name is not an upper-case identifier.
 */
export function bindingNameOf(req: Pick<ResolveResourceRequest, "name">, fallback: string): string {
  const binding = req.name || fallback;
  if (!BINDING_NAME.test(binding))
    throw new InvalidRequest(`name "${binding.slice(0, 40)}" must match /^[A-Z][A-Z0-9_]*$/`);
  return binding;
}

/** Builds the Gatekeeper service implementation from the shared skeleton and `parts`. */
export function gatekeeperHandlers(deps: HandlerDeps, parts: GatekeeperParts): GatekeeperServer {
  const { logger, metrics } = deps;
  return {
    resolveResource: unaryHandler("ResolveResource", deps, (req) => parts.resolveResource(req)),
    openSession: (call) => {
      metrics.rpcs.inc({ method: "OpenSession", code: "STARTED" });
      serveSession(call, {
        logger,
        ...parts.session,
        onSessionChange: (d) => metrics.sessions.inc(d),
      });
    },
    // Streams `running` while the apply is in flight, then the outcome (gatekeeper.proto).
    applyAction: applyStreamHandler(deps, (req, ctx) => parts.apply(req, ctx)),
    // A run in order, stopping at the first failure (gatekeeper.proto).
    applyActions: applyRunHandler(deps, (req, ctx) => parts.apply(req, ctx), undefined, parts.runUnits),
    actionRejected: unaryHandler("ActionRejected", deps, async (req) => {
      if (parts.dropRejected) {
        const dropped = parts.dropRejected(req);
        logger.info({ event: "action.rejected", actionId: req.actionId, dropped }, "pending writes dropped");
      }
      return {};
    }),
    prepareRevert: unaryHandler("PrepareRevert", deps, (req) => parts.prepareRevert(req)),
    checkObserver: unaryHandler("CheckObserver", deps, async (req) => {
      const res = await parts.checkObserver(req);
      logger.info(
        { event: "observer.checked", observer: req.observer, allowed: res.allowed },
        "observer checked",
      );
      return res;
    }),
  };
}
