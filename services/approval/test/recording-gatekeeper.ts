/**
 * FAKE gatekeeper process: a real gRPC Gatekeeper server on 127.0.0.1 that records the
 * ApplyAction, ApplyActions and ActionRejected calls the lifecycle worker makes and the PrepareRevert calls of
 * the approval service, and answers as configured. It stands in for gatekeeper-mcp (exercised with
 * a real MCP server in the cross-service suite) and for a gatekeeper that can revert.
 */
import {
  type ActionRejectedRequest,
  type ApplyActionRequest,
  type ApplyActionResponse,
  type GatekeeperServer,
  GatekeeperService,
  type PrepareRevertRequest,
  type PrepareRevertResponse,
} from "@gatehouse/proto";
import { Server, ServerCredentials, status } from "@grpc/grpc-js";

export class RecordingGatekeeper {
  /** One entry per action performed (inside an ApplyActions run too). */
  readonly applied: ApplyActionRequest[] = [];
  /** How many ApplyActions calls (runs) arrived. */
  runs = 0;
  readonly rejected: ActionRejectedRequest[] = [];
  readonly revertsPrepared: PrepareRevertRequest[] = [];
  /**
   * PrepareRevert answers by "<workspaceId>/<actionId>" (set with `answerRevert`): a response, or
   * a refusal `{ code, details }`. Default: FAILED_PRECONDITION "this gatekeeper cannot revert …".
   */
  private readonly revertAnswers = new Map<
    string,
    PrepareRevertResponse | { code: status; details: string }
  >();
  /** Delay before answering ApplyAction, in ms. */
  delayMs = 0;
  /** Answers by "<workspaceId>/<actionId>" (set with `answer`); default ok with `{"applied": <id>}`. */
  private readonly answers = new Map<string, ApplyActionResponse>();
  /** Called when an ApplyAction arrives, before answering (e.g. to kill the worker mid-apply). */
  onApply: ((request: ApplyActionRequest) => Promise<void>) | undefined;
  private readonly server = new Server();
  port = 0;

  /** Binds 127.0.0.1 on a free port. */
  async start(): Promise<this> {
    const unimplemented = (_call: unknown, cb: (err: { code: number; details: string }) => void) =>
      cb({ code: status.UNIMPLEMENTED, details: "not part of the recording gatekeeper" });
    const impl: GatekeeperServer = {
      resolveResource: unimplemented as GatekeeperServer["resolveResource"],
      openSession: (call) =>
        call.destroy(Object.assign(new Error("unimplemented"), { code: status.UNIMPLEMENTED })),
      applyAction: (call) => {
        const req = call.request;
        this.applied.push(req);
        call.write({ event: { $case: "running", running: { elapsedMs: 0, nextWithinMs: 2000 } } });
        void (async () => {
          await this.onApply?.(req);
          if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
          const outcome = this.answers.get(`${req.workspaceId}/${req.actionId}`) ?? {
            ok: true,
            resultJson: JSON.stringify({ applied: req.actionId }),
            error: "",
          };
          call.write({ event: { $case: "outcome", outcome } });
          call.end();
        })();
      },
      applyActions: (call) => {
        const run = call.request;
        this.runs++;
        void (async () => {
          for (const a of run.actions) {
            const req: ApplyActionRequest = {
              workspaceId: run.workspaceId,
              binding: run.binding,
              url: run.url,
              trust: run.trust,
              actionId: a.actionId,
              localId: a.localId,
              payloadJson: a.payloadJson,
              dependencyResults: a.dependencyResults,
            };
            this.applied.push(req);
            call.write({
              actionId: a.actionId,
              event: { $case: "running", running: { elapsedMs: 0, nextWithinMs: 2000 } },
            });
            await this.onApply?.(req);
            if (this.delayMs) await new Promise((r) => setTimeout(r, this.delayMs));
            const outcome = this.answers.get(`${req.workspaceId}/${req.actionId}`) ?? {
              ok: true,
              resultJson: JSON.stringify({ applied: req.actionId }),
              error: "",
            };
            call.write({ actionId: a.actionId, event: { $case: "outcome", outcome } });
            if (!outcome.ok) break;
          }
          call.end();
        })();
      },
      actionRejected: (call, cb) => {
        this.rejected.push(call.request);
        cb(null, {});
      },
      prepareRevert: (call, cb) => {
        const req = call.request;
        this.revertsPrepared.push(req);
        const answer = this.revertAnswers.get(`${req.workspaceId}/${req.actionId}`) ?? {
          code: status.FAILED_PRECONDITION,
          details: `this gatekeeper cannot revert action ${req.actionId}`,
        };
        if ("code" in answer) cb(Object.assign(new Error(answer.details), answer), null);
        else cb(null, answer);
      },
      checkObserver: unimplemented as GatekeeperServer["checkObserver"],
    };
    this.server.addService(GatekeeperService, impl);
    this.port = await new Promise<number>((resolve, reject) =>
      this.server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (err, port) =>
        err ? reject(err) : resolve(port),
      ),
    );
    return this;
  }

  /** Sets the answer to ApplyAction for one action. */
  answer(workspaceId: string, actionId: number, response: ApplyActionResponse): void {
    this.answers.set(`${workspaceId}/${actionId}`, response);
  }

  /** Sets the answer to PrepareRevert for one action: the staged revert, or a refusal. */
  answerRevert(
    workspaceId: string,
    actionId: number,
    answer: PrepareRevertResponse | { code: status; details: string },
  ): void {
    this.revertAnswers.set(`${workspaceId}/${actionId}`, answer);
  }

  /** PrepareRevert calls recorded for one workspace, in call order. */
  revertsPreparedIn(workspaceId: string): PrepareRevertRequest[] {
    return this.revertsPrepared.filter((r) => r.workspaceId === workspaceId);
  }

  /** Clears the per-test settings (delay, hook); answers are per workspace and stay. */
  reset(): void {
    this.delayMs = 0;
    this.onApply = undefined;
  }

  /** Applies recorded for one workspace, in call order. */
  appliedIn(workspaceId: string): ApplyActionRequest[] {
    return this.applied.filter((r) => r.workspaceId === workspaceId);
  }

  /** Reject notices recorded for one workspace, in call order. */
  rejectedIn(workspaceId: string): ActionRejectedRequest[] {
    return this.rejected.filter((r) => r.workspaceId === workspaceId);
  }

  close(): void {
    this.server.forceShutdown();
  }
}
