/**
 * Decisions.RequestRevert (approval.proto): a person asks to revert an applied action. The action's
 * gatekeeper stages the inverse write (Gatekeeper.PrepareRevert, reached by the binding's
 * gatekeeper kind through the shared gRPC gatekeeper client); the domain then submits it as a new
 * pending action of the same binding (`description.implementsRevert` = the original id) and records
 * ActionReverted, in one append with the expected revision; its lifecycle workflow starts like any
 * submitted action's. The revert is applied only once a person (or a rule) approves it.
 */
import {
  decide,
  GatekeeperCallError,
  type GatekeeperReverter,
  InvalidField,
  KeyedQueue,
  revertible,
  toActionRecord,
  UnknownBinding,
  type WorkspaceStreams,
} from "@gatehouse/approval-core";
import type { ActionRecord } from "@gatehouse/proto";
import { status } from "@grpc/grpc-js";
import type { Logger } from "pino";
import type { ActionLifecycle } from "./lifecycle/action-lifecycle.ts";

/** Gatekeeper answers that mean "this action cannot be reverted" rather than "try again later". */
const REFUSALS = new Set<number>([
  status.FAILED_PRECONDITION,
  status.UNIMPLEMENTED,
  status.INVALID_ARGUMENT,
  status.NOT_FOUND,
  status.PERMISSION_DENIED,
]);

/**
 * The binding's gatekeeper did not stage a revert. `kind`: "refused" — it answered that it cannot
 * revert this action (FAILED_PRECONDITION to the caller); "unreachable" — not configured, not
 * reachable or failing (UNAVAILABLE); "invalid" — it answered without a local id or description
 * (INTERNAL, a gatekeeper bug). Nothing was appended in every case.
 */
export class RevertNotPrepared extends Error {
  override name = "RevertNotPrepared";
  constructor(
    readonly actionId: number,
    readonly binding: string,
    readonly kind: "refused" | "unreachable" | "invalid",
    words: string,
  ) {
    super(
      `action ${actionId} cannot be reverted through binding "${binding}": ${words}; nothing was appended`,
    );
  }
}

/** What RevertRequests needs. */
export interface RevertRequestsOptions {
  streams: WorkspaceStreams;
  lifecycle: ActionLifecycle;
  /** Gatekeeper.PrepareRevert by gatekeeper kind. */
  gatekeepers: GatekeeperReverter;
  logger?: Logger | undefined;
}

/** "user:alice" -> `{ kind: "user", id: "alice" }`; "service:<id>" is accepted too. */
function callerOf(requestedBy: string): { kind: string; id: string } {
  const m = /^(user|service):(\S.*)$/.exec(requestedBy);
  if (!m)
    throw new InvalidField(
      "requested_by",
      `say who asks as "user:<id>", e.g. "user:alice" (got "${requestedBy}")`,
    );
  return { kind: m[1] as string, id: m[2] as string };
}

export class RevertRequests {
  /** One revert request per (workspace, action) at a time in this process. */
  private readonly queue = new KeyedQueue();

  constructor(private readonly options: RevertRequestsOptions) {}

  /**
   * Stages and submits the revert of applied action `actionId`.
   * @param requestedBy "user:<id>" of the person asking (recorded as the caller and on ActionReverted).
   * @returns the new revert action (PENDING unless a rule approved it, or a cascade rejected it).
   * @throws InvalidField (requested_by), WorkspaceNotFound, ActionNotFound, ActionNotRevertible (not
   *   applied, or already reverted), UnknownBinding (the binding was removed), RevertNotPrepared (the
   *   gatekeeper refused or could not be reached; nothing appended), or the domain's refusal of the
   *   revert write (e.g. WorkspaceLatched for an egress revert after the latch, recorded as
   *   ActionRefused).
   */
  request(workspaceId: string, actionId: number, requestedBy: string): Promise<ActionRecord> {
    const { streams, lifecycle, gatekeepers, logger } = this.options;
    return this.queue.run(`${workspaceId}\u0000${actionId}`, async () => {
      const caller = callerOf(requestedBy);
      const state = await streams.state(workspaceId);
      const original = revertible(state, actionId);
      const binding = state.bindings.get(original.binding);
      if (!binding) throw new UnknownBinding(original.binding);
      let prepared: Awaited<ReturnType<GatekeeperReverter["prepareRevert"]>>;
      try {
        prepared = await gatekeepers.prepareRevert(binding.gatekeeper, {
          workspaceId,
          binding: binding.binding,
          url: binding.url,
          trust: binding.trust,
          actionId: original.id,
          localId: original.localId,
          payloadJson: original.payloadJson,
          resultJson: original.resultJson,
        });
      } catch (err) {
        if (!(err instanceof GatekeeperCallError)) throw err;
        const refused = err.code !== undefined && REFUSALS.has(err.code);
        throw new RevertNotPrepared(
          actionId,
          binding.binding,
          refused ? "refused" : "unreachable",
          err.message,
        );
      }
      if (!prepared.localId || !prepared.description) {
        throw new RevertNotPrepared(
          actionId,
          binding.binding,
          "invalid",
          `gatekeeper "${binding.gatekeeper}" answered PrepareRevert without a ${prepared.localId ? "description" : "local id"}`,
        );
      }
      const { description, localId, payloadJson } = prepared;
      const { events } = await streams.execute(
        workspaceId,
        (s) => decide({ type: "RequestRevert", actionId, requestedBy, localId, description, payloadJson }, s),
        { caller },
      );
      const revertId = events[0]?.revision ?? 0;
      logger?.info({ event: "revert_requested", workspaceId, actionId, revertId, requestedBy });
      await lifecycle.afterSubmit(workspaceId, revertId);
      const after = await streams.state(workspaceId);
      const revert = after.actions.get(revertId);
      if (!revert) throw new Error(`revert action ${revertId} is missing from the projection`);
      return toActionRecord(after, revert);
    });
  }
}
