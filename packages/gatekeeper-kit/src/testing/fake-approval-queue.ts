/**
 * A FAKE `gatehouse.v1.ApprovalQueue` for gatekeeper tests, served on loopback: it stands in for
 * services/approval, which a gatekeeper may not import. It records every observation and
 * submission, hands out ids counting up from 1, and lists unapplied submissions (those not in
 * `settled`) for a gatekeeper's restore, with the results a test recorded in `results` as the
 * applied provisional ids. `GetActionForCaller` answers from `records` (a test moves an action to
 * applied or rejected there); `refuseObservations` makes `AuthorizeObservation` fail.
 *
 * Imported by tests only, as `@gatehouse/gatekeeper-kit/testing`.
 */
import {
  type ActionDescription,
  type ActionRecord,
  ActionStatus,
  type ApprovalQueueServer,
  ApprovalQueueService,
  type ObservationDescription,
} from "@gatehouse/proto";
import { Server, ServerCredentials, type ServiceError, status } from "@grpc/grpc-js";

/** FAKE ApprovalQueue: records observations and submissions; ids count up from 1. */
export class FakeApprovalQueue {
  /** Workspace and binding the unapplied actions are listed under (default "ws-1", "REPO"). */
  readonly #workspaceId: string;
  readonly #binding: string;
  constructor(opts: { workspaceId?: string; binding?: string } = {}) {
    this.#workspaceId = opts.workspaceId ?? "ws-1";
    this.#binding = opts.binding ?? "REPO";
  }
  /** The description of each recorded observation, in order. */
  readonly observations: ObservationDescription[] = [];
  /** Each recorded observation with the caller token it came with and the id handed out. */
  readonly observationCalls: {
    callerToken: string;
    observationId: number;
    description: ObservationDescription;
  }[] = [];
  readonly submissions: {
    callerToken: string;
    localId: string;
    actionId: number;
    description: ActionDescription;
    payloadJson: string;
  }[] = [];
  /** Action ids applied or rejected (left out of ListUnappliedForCaller). */
  readonly settled = new Set<number>();
  /** Action id -> result_json of applied actions (a test records them; listed as `applied` for "~N" ids). */
  readonly results = new Map<number, string>();
  /** Action id -> the record GetActionForCaller answers with (PENDING when submitted; a test edits it). */
  readonly records = new Map<number, Partial<ActionRecord>>();
  /** When set, AuthorizeObservation fails with this status code and records nothing. */
  refuseObservations: status | null = null;
  port = 0;
  #next = 1;
  #server = new Server();

  async start(): Promise<this> {
    const impl: ApprovalQueueServer = {
      authorizeObservation: (call, cb) => {
        if (this.refuseObservations !== null) {
          cb({ code: this.refuseObservations, details: "fake refusal" } as ServiceError);
          return;
        }
        const observationId = this.#next++;
        const description = call.request.description!;
        this.observations.push(description);
        this.observationCalls.push({ callerToken: call.request.callerToken, observationId, description });
        cb(null, { observationId });
      },
      submitAction: (call, cb) => {
        const r = call.request;
        const actionId = this.#next++;
        this.submissions.push({
          callerToken: r.callerToken,
          localId: r.localId,
          actionId,
          description: r.description!,
          payloadJson: r.payloadJson,
        });
        this.records.set(actionId, {
          id: actionId,
          localId: r.localId,
          description: r.description,
          status: ActionStatus.ACTION_STATUS_PENDING,
        });
        cb(null, { actionId, status: ActionStatus.ACTION_STATUS_PENDING });
      },
      getActionForCaller: (call, cb) => {
        const rec = this.records.get(call.request.actionId);
        if (!rec) {
          cb({ code: status.NOT_FOUND, details: `no action ${call.request.actionId}` } as ServiceError);
          return;
        }
        cb(null, { ...emptyRecord(), ...rec });
      },
      listUnappliedForCaller: (_call, cb) => {
        const byLocal = new Map(this.submissions.map((s) => [s.localId, s.actionId]));
        const actions = this.submissions
          .filter((s) => !this.settled.has(s.actionId))
          .map((s) => ({
            action: {
              ...emptyRecord(),
              id: s.actionId,
              workspaceId: this.#workspaceId,
              binding: this.#binding,
              localId: s.localId,
              description: s.description,
              status: ActionStatus.ACTION_STATUS_PENDING,
              dependsOn: s.description.dependsOn.map((l) => byLocal.get(l) ?? 0),
              lastRevision: s.actionId,
            },
            payloadJson: s.payloadJson,
          }));
        const applied = this.submissions
          .filter((s) => this.results.has(s.actionId) && /^~[1-9][0-9]*$/.test(s.localId))
          .map((s) => ({ localId: s.localId, resultJson: this.results.get(s.actionId)! }));
        cb(null, { actions, usedLocalIds: this.submissions.map((s) => s.localId), applied });
      },
    };
    this.#server.addService(ApprovalQueueService, impl);
    this.port = await new Promise<number>((res, rej) =>
      this.#server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (e, p) =>
        e ? rej(e) : res(p),
      ),
    );
    return this;
  }

  close(): void {
    this.#server.forceShutdown();
  }
}

/** An ActionRecord with every field empty. */
function emptyRecord(): ActionRecord {
  return {
    id: 0,
    workspaceId: "",
    binding: "",
    localId: "",
    description: undefined,
    status: ActionStatus.ACTION_STATUS_UNSPECIFIED,
    dependsOn: [],
    caller: undefined,
    submittedAt: "",
    decidedBy: "",
    decidedAt: "",
    reason: "",
    cascadedFrom: 0,
    resultJson: "",
    outcomeUnknown: false,
    executionId: "",
    lastRevision: 0,
    chatStartedBy: "",
    descriptionDigest: "",
    withdrawnBy: "",
  };
}
