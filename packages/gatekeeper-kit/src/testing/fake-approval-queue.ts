/**
 * A FAKE `gatehouse.v1.ApprovalQueue` for gatekeeper tests, served on loopback: it stands in for
 * services/approval, which a gatekeeper may not import. It records every observation and
 * submission, hands out ids counting up from 1, and lists unapplied submissions (those not in
 * `settled`) for a gatekeeper's restore, with the results a test recorded in `results` as the
 * applied provisional ids.
 *
 * Imported by tests only, as `@gatehouse/gatekeeper-kit/testing`.
 */
import {
  type ActionDescription,
  ActionStatus,
  type ApprovalQueueServer,
  ApprovalQueueService,
  type ObservationDescription,
} from "@gatehouse/proto";
import { Server, ServerCredentials } from "@grpc/grpc-js";

/** FAKE ApprovalQueue: records observations and submissions; ids count up from 1. */
export class FakeApprovalQueue {
  /** Workspace and binding the unapplied actions are listed under (default "ws-1", "REPO"). */
  readonly #workspaceId: string;
  readonly #binding: string;
  constructor(opts: { workspaceId?: string; binding?: string } = {}) {
    this.#workspaceId = opts.workspaceId ?? "ws-1";
    this.#binding = opts.binding ?? "REPO";
  }
  readonly observations: ObservationDescription[] = [];
  readonly submissions: {
    localId: string;
    actionId: number;
    description: ActionDescription;
    payloadJson: string;
  }[] = [];
  /** Action ids applied or rejected (left out of ListUnappliedForCaller). */
  readonly settled = new Set<number>();
  /** Action id -> result_json of applied actions (a test records them; listed as `applied` for "~N" ids). */
  readonly results = new Map<number, string>();
  port = 0;
  #next = 1;
  #server = new Server();

  async start(): Promise<this> {
    const impl: ApprovalQueueServer = {
      authorizeObservation: (call, cb) => {
        this.observations.push(call.request.description!);
        cb(null, { observationId: this.#next++ });
      },
      submitAction: (call, cb) => {
        const r = call.request;
        const actionId = this.#next++;
        this.submissions.push({
          localId: r.localId,
          actionId,
          description: r.description!,
          payloadJson: r.payloadJson,
        });
        cb(null, { actionId, status: ActionStatus.ACTION_STATUS_PENDING });
      },
      getActionForCaller: (_call, cb) => cb({ code: 12, details: "not used by these tests" }),
      listUnappliedForCaller: (_call, cb) => {
        const byLocal = new Map(this.submissions.map((s) => [s.localId, s.actionId]));
        const actions = this.submissions
          .filter((s) => !this.settled.has(s.actionId))
          .map((s) => ({
            action: {
              id: s.actionId,
              workspaceId: this.#workspaceId,
              binding: this.#binding,
              localId: s.localId,
              description: s.description,
              status: ActionStatus.ACTION_STATUS_PENDING,
              dependsOn: s.description.dependsOn.map((l) => byLocal.get(l) ?? 0),
              caller: undefined,
              submittedAt: "",
              decidedBy: "",
              decidedAt: "",
              reason: "",
              cascadedFrom: 0,
              resultJson: "",
              outcomeUnknown: false,
              executionId: "",
              lastRevision: s.actionId,
              chatStartedBy: "",
              descriptionDigest: "",
              withdrawnBy: "",
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
