/**
 * FAKE gatekeeper (the real one needs an MCP server): an in-process GatekeeperApplier that records
 * every ApplyAction / ActionRejected call and answers as told — ok by default, a failure, or a
 * block until released. It stands in for the external system: `applied` is what "reached" it.
 */
import type { GatekeeperApplier, RunEnd, RunWatch } from "@gatehouse/approval-core";
import { GatekeeperCallError } from "@gatehouse/approval-core";
import type {
  ActionRejectedRequest,
  ApplyActionRequest,
  ApplyActionResponse,
  ApplyActionsRequest,
} from "@gatehouse/proto";

export class RecordingGatekeeper implements GatekeeperApplier {
  readonly applied: ApplyActionRequest[] = [];
  readonly rejected: ActionRejectedRequest[] = [];
  /** Answer per `${workspaceId}/${actionId}`: a response, or an Error to throw. Default ok with `{"applied": <id>}`. */
  readonly answers = new Map<string, ApplyActionResponse | Error>();
  /** When true, ready() fails as if the gatekeeper were down (nothing is sent). */
  unreachable = false;
  /** How many ready() checks failed because `unreachable` was set (each is one apply attempt refused). */
  refusedReady = 0;
  private gate: Promise<void> | undefined;
  private openGate: (() => void) | undefined;
  private readonly waiters: Array<() => void> = [];

  /** From now on ApplyAction calls wait until `release()`. */
  block(): void {
    this.gate = new Promise((resolve) => {
      this.openGate = resolve;
    });
  }

  /** Lets blocked calls answer. */
  release(): void {
    this.openGate?.();
    this.gate = undefined;
  }

  /** Resolves once `count` ApplyAction calls were received. */
  async waitForApplies(count: number, timeoutMs = 60_000): Promise<void> {
    const deadline = Date.now() + timeoutMs;
    while (this.applied.length < count) {
      if (Date.now() > deadline) throw new Error(`expected ${count} apply calls, got ${this.applied.length}`);
      await new Promise<void>((r) => {
        this.waiters.push(r);
        setTimeout(r, 50);
      });
    }
  }

  /** How many ApplyAction calls reached this gatekeeper for action `actionId` of `workspaceId`. */
  appliesOf(workspaceId: string, actionId: number): number {
    return this.applied.filter((r) => r.workspaceId === workspaceId && r.actionId === actionId).length;
  }

  async ready(gatekeeper: string): Promise<void> {
    if (this.unreachable) {
      this.refusedReady++;
      throw new GatekeeperCallError(`gatekeeper "${gatekeeper}" is down (the request was not sent)`, false);
    }
  }

  async apply(_gatekeeper: string, request: ApplyActionRequest): Promise<ApplyActionResponse> {
    this.applied.push(request);
    for (const w of this.waiters.splice(0)) w();
    if (this.gate) await this.gate;
    const answer = this.answers.get(`${request.workspaceId}/${request.actionId}`);
    if (answer instanceof Error) throw answer;
    return answer ?? { ok: true, resultJson: JSON.stringify({ applied: request.actionId }), error: "" };
  }

  /**
   * A run as the kit's ApplyActions performs it: each action through `apply` (recorded the same
   * way), in order, with earlier results as dependency results; stops after an ok=false answer; an
   * Error answer makes that action `lost` (a GatekeeperCallError as given; anything else as
   * maybe sent) and the rest not sent.
   */
  async applyRun(gatekeeper: string, request: ApplyActionsRequest, watch: RunWatch): Promise<RunEnd> {
    const { actions, ...run } = request;
    const results: Record<string, string> = {};
    for (const [i, a] of actions.entries()) {
      let outcome: ApplyActionResponse;
      try {
        outcome = await this.apply(gatekeeper, {
          ...run,
          actionId: a.actionId,
          localId: a.localId,
          payloadJson: a.payloadJson,
          dependencyResults: { ...a.dependencyResults, ...results },
        });
      } catch (err) {
        const error =
          err instanceof GatekeeperCallError ? err : new GatekeeperCallError((err as Error).message, true);
        return {
          lost: { actionId: a.actionId, error },
          notSent: actions.slice(i + 1).map((x) => x.actionId),
        };
      }
      watch.onOutcome(a.actionId, outcome);
      if (!outcome.ok) return { notSent: actions.slice(i + 1).map((x) => x.actionId) };
      results[a.localId] = outcome.resultJson;
    }
    return { notSent: [] };
  }

  async notifyRejected(_gatekeeper: string, request: ActionRejectedRequest): Promise<void> {
    this.rejected.push(request);
  }

  close(): void {}
}
