/**
 * gRPC handlers of `gatehouse.v1.Gatekeeper` for PostgreSQL: ResolveResource, OpenSession (capnweb
 * via the kit), ApplyAction and ApplyActions (exactly once each, apply.ts), ActionRejected (drops
 * the write and those built on it from the overlay), PrepareRevert (revert.ts) and CheckObserver
 * (observers.ts, strategy B).
 */
import {
  type ApprovalQueue,
  bindingNameOf,
  checkOpenFields,
  gatekeeperHandlers,
} from "@gatehouse/gatekeeper-kit";
import type {
  BindingActionKind,
  GatekeeperServer,
  ResolveResourceRequest,
  ResolveResourceResponse,
} from "@gatehouse/proto";
import type { Logger } from "pino";
import { type ApplyDeps, applyAction } from "./apply.ts";
import { Binding, openResource } from "./binding.ts";
import { generatePostgresDts } from "./dts.ts";
import type { Limits } from "./limits.ts";
import type { PostgresGatekeeperMetrics } from "./metrics.ts";
import { checkObserver } from "./observers.ts";
import type { Pools } from "./pools.ts";
import type { RegistryConfig } from "./registry.ts";
import { restoreOnce } from "./restore.ts";
import { prepareRevert } from "./revert.ts";
import { dropWrite, type PostgresState } from "./state.ts";
import { POSTGRES_METHODS, PostgresTarget } from "./target.ts";

export interface ServerDeps {
  registry: RegistryConfig;
  pools: Pools;
  limits: Limits;
  approval: ApprovalQueue;
  state: PostgresState;
  logger: Logger;
  metrics: PostgresGatekeeperMetrics;
  /** Test hook: runs after an apply committed, before its reply. */
  afterCommit?: (actionId: number) => void;
}

const NEVER = "the PostgreSQL gatekeeper never marks its writes auto-approvable: a person approves each one";

/** The action kinds a PostgreSQL binding can submit (tags writes.ts and revert.ts set). */
export const POSTGRES_ACTION_KINDS: readonly BindingActionKind[] = [
  { tag: "postgres.insert", label: "SQL insert", autoApprovable: false, notAutoApprovableReason: NEVER },
  { tag: "postgres.update", label: "SQL update", autoApprovable: false, notAutoApprovableReason: NEVER },
  { tag: "postgres.delete", label: "SQL delete", autoApprovable: false, notAutoApprovableReason: NEVER },
  { tag: "postgres.ddl", label: "Schema change", autoApprovable: false, notAutoApprovableReason: NEVER },
  {
    tag: "postgres.revert",
    label: "Revert SQL write",
    autoApprovable: false,
    notAutoApprovableReason: NEVER,
  },
];

/** ResolveResource: the binding name (default DB), d.ts, methods, normalized URL and action kinds. */
export function resolveResource(req: ResolveResourceRequest, deps: ServerDeps): ResolveResourceResponse {
  const binding = bindingNameOf(req, "DB");
  const { resource } = openResource(req.url, deps.registry);
  if (req.checkOnly) {
    return {
      binding,
      trust: "byo",
      dts: "",
      methods: [],
      url: resource.normalizedUrl,
      actionKinds: undefined,
    };
  }
  return {
    binding,
    trust: "byo",
    dts: generatePostgresDts(binding, resource, deps.limits.maxRows),
    methods: [...POSTGRES_METHODS],
    url: resource.normalizedUrl,
    actionKinds: { kinds: POSTGRES_ACTION_KINDS.map((k) => ({ ...k })) },
  };
}

/** Builds the Gatekeeper service implementation: PostgreSQL's parts in the kit's `gatekeeperHandlers`. */
export function createGatekeeperServer(deps: ServerDeps): GatekeeperServer {
  const applyDeps: ApplyDeps = {
    registry: deps.registry,
    pools: deps.pools,
    state: deps.state,
    logger: deps.logger,
    ...(deps.afterCommit ? { afterCommit: deps.afterCommit } : {}),
  };
  return gatekeeperHandlers(deps, {
    resolveResource: async (req) => resolveResource(req, deps),
    session: {
      noSuchMethodHint: `call one of ${POSTGRES_METHODS.join(", ")} (see the binding's .d.ts)`,
      methodsOnFailure: POSTGRES_METHODS,
      async start(open) {
        checkOpenFields(open);
        const opened = openResource(open.url, deps.registry);
        const state = deps.state.binding(open.workspaceId, open.binding);
        await restoreOnce(state, deps.approval, open.callerToken);
        return new PostgresTarget(
          new Binding(
            { workspaceId: open.workspaceId, binding: open.binding, callerToken: open.callerToken },
            opened,
            state,
            deps.approval,
            deps.limits,
            deps.pools,
          ),
        );
      },
    },
    // Exactly once each (apply.ts).
    apply: (req, ctx) => applyAction(req, applyDeps, ctx),
    dropRejected: (req) =>
      dropWrite(deps.state.binding(req.workspaceId, req.binding), req.localId, "was rejected"),
    prepareRevert: async (req) =>
      prepareRevert(req, { registry: deps.registry, state: deps.state, limits: deps.limits }),
    // Strategy B (observers.ts).
    checkObserver: (req) => checkObserver(req, deps.registry, deps.state),
  });
}
