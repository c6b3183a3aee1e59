/**
 * Kernel.RemoveBinding: takes a binding back. The approval decider (approval-core, `RemoveBinding`)
 * plans BindingRemoved plus the rejections of the binding's unsent actions and their cascades; they
 * are appended together with the workspace's revision as expected revision, so an approval that
 * raced the removal either lands first (and its action is rejected here) or is refused. Then, best
 * effort: the rejections are handed to the binding's run in the lifecycle worker, which announces
 * them like a person's rejection — tell awaiting turns (roots first), then the gatekeeper
 * (ActionRejected) so it drops the writes from its overlays; without Temporal the kernel tells the
 * gatekeeper itself. Running executions notice at their next call on the
 * binding (execution.ts); later ones never get it.
 */
import {
  ApprovalError,
  type WorkspaceState as ApprovalState,
  decide,
  InvalidField,
  UnknownBinding,
  type WorkspaceStreams,
} from "@gatehouse/approval-core";
import {
  BINDING_RUN_WORKFLOW,
  type BindingRunInput,
  bindingRunAnnounceSignal,
  bindingRunWorkflowId,
  LIFECYCLE_TASK_QUEUE,
} from "@gatehouse/approval-core/lifecycle-contract";
import {
  ActionRejected,
  BindingRemoved,
  GatekeeperClient,
  type RemoveBindingRequest,
  type RemoveBindingResponse,
} from "@gatehouse/proto";
import { callUnary } from "@gatehouse/service-kit";
import type { Client } from "@temporalio/client";
import type { Logger } from "pino";
import { BindingNotFound, InvalidArgument } from "./domain/errors.ts";
import type { GatekeeperClients } from "./gatekeepers.ts";
import type { Workspaces } from "./workspaces.ts";

/** What RemoveBinding needs. */
export interface RevocationDeps {
  workspaces: Workspaces;
  streams: WorkspaceStreams;
  gatekeepers: GatekeeperClients;
  logger: Logger;
  /** Without it the kernel tells the gatekeeper itself (awaiting turns are not told). */
  temporal?: Client | undefined;
}

/** Deadline of each ActionRejected notice to the gatekeeper, ms. */
const NOTICE_TIMEOUT_MS = 5000;

/**
 * Removes `req.binding` (case-insensitive) from the workspace.
 * @returns the removed grant, the ids rejected "binding removed" and those cascaded, the revision.
 * @throws WorkspaceNotFound, BindingNotFound, InvalidArgument (no removed_by, reason too long).
 */
export async function removeBinding(
  deps: RevocationDeps,
  req: RemoveBindingRequest,
): Promise<RemoveBindingResponse> {
  const binding = req.binding.trim().toUpperCase();
  if (!binding)
    throw new InvalidArgument(
      "binding is required, e.g. MEMORY (list them with `gatehouse bindings <workspace>`)",
    );
  const kernelState = await deps.workspaces.load(req.workspaceId);
  if (!kernelState.bindings.has(binding)) throw new BindingNotFound(req.workspaceId, binding);
  const caller = req.removedBy.startsWith("user:") ? { kind: "user", id: req.removedBy.slice(5) } : undefined;
  let appended: Awaited<ReturnType<WorkspaceStreams["execute"]>>;
  try {
    appended = await deps.streams.execute(
      req.workspaceId,
      (s) =>
        decide({ type: "RemoveBinding", binding, removedBy: req.removedBy, reason: req.reason.trim() }, s),
      caller ? { caller } : {},
    );
  } catch (err) {
    if (err instanceof UnknownBinding) throw new BindingNotFound(req.workspaceId, binding);
    if (err instanceof InvalidField) throw new InvalidArgument(err.message);
    if (err instanceof ApprovalError) throw new InvalidArgument(err.message);
    throw err;
  }
  const [removal, ...rejections] = appended.events;
  const rejected = rejections.map((e) => ActionRejected.fromJSON(e.data));
  const direct = rejected.filter((r) => r.cascadedFrom === 0).map((r) => r.actionId);
  const cascaded = rejected.filter((r) => r.cascadedFrom !== 0).map((r) => r.actionId);
  const removed = removal ? BindingRemoved.fromJSON(removal.data) : undefined;
  deps.logger.info({
    event: "binding_removed",
    workspaceId: req.workspaceId,
    binding,
    rejected: direct.length,
    cascaded: cascaded.length,
  });
  const kind = kernelState.bindings.get(binding)?.gatekeeper ?? "";
  const ids = rejected.map((r) => r.actionId);
  if (!(await announce(deps, req.workspaceId, binding, ids))) {
    await notifyGatekeeper(deps, req.workspaceId, kind, appended.state, ids);
  }
  return {
    binding,
    grant: removed?.grant ?? 0,
    rejectedActionIds: direct,
    cascadedActionIds: cascaded,
    revision: removal?.revision ?? 0,
  };
}

/**
 * Hands the rejections (roots first, then their cascades) to the binding's run in the lifecycle
 * worker, which tells awaiting turns and then the gatekeeper (signal-with-start, so it works
 * whether or not the run exists). @returns false without Temporal or when it cannot be reached.
 */
async function announce(
  deps: RevocationDeps,
  workspaceId: string,
  binding: string,
  ids: number[],
): Promise<boolean> {
  const { temporal } = deps;
  if (!temporal || ids.length === 0) return false;
  const input: BindingRunInput = { workspaceId, binding };
  try {
    await temporal.workflow.signalWithStart(BINDING_RUN_WORKFLOW, {
      workflowId: bindingRunWorkflowId(workspaceId, binding),
      taskQueue: LIFECYCLE_TASK_QUEUE,
      args: [input],
      signal: bindingRunAnnounceSignal,
      signalArgs: [{ actionIds: ids }],
    });
    return true;
  } catch (err) {
    deps.logger.info({ event: "removal_announce_failed", workspaceId, err: (err as Error).name });
    return false;
  }
}

/** Best-effort ActionRejected notices, so the gatekeeper drops the writes from its overlays. */
async function notifyGatekeeper(
  deps: RevocationDeps,
  workspaceId: string,
  kind: string,
  state: ApprovalState,
  ids: number[],
): Promise<void> {
  await Promise.all(
    ids.map(async (actionId) => {
      const a = state.actions.get(actionId);
      if (!a) return;
      try {
        const client = deps.gatekeepers.get(kind);
        await callUnary(
          client,
          GatekeeperClient.prototype.actionRejected,
          { workspaceId, binding: a.binding, actionId, localId: a.localId },
          NOTICE_TIMEOUT_MS,
        );
      } catch (err) {
        deps.logger.warn({ event: "reject_notice_failed", workspaceId, actionId, err: (err as Error).name });
      }
    }),
  );
}
