/**
 * FAKE gatekeeper (the real one needs an MCP server): an in-process GatekeeperApplier that records
 * every ApplyAction / ApplyActions / ActionRejected call and answers as told — ok by default, a
 * failure, or a block until released. It stands in for the external system: `applied` is what
 * "reached" it, one entry per action performed (inside a run too).
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
  /** Every ApplyActions call (one per run), in order. */
  readonly runs: ApplyActionsRequest[] = [];
  readonly rejected: ActionRejectedRequest[] = [];
  /** Answer per `${workspaceId}/${actionId}`: a response, or an Error to throw. Default ok with `{"applied": <id>}`. */
  readonly answers = new Map<string, ApplyActionResponse | Error>();
  /**
   * `${workspaceId}/${actionId}` -> how many actions of a run, from that one on, the gatekeeper
   * performs in one external call (as git's one push for a run of commits): `running` comes for
   * each of them before the first one's answer.
   */
  readonly together = new Map<string, number>();
  /** When true, ready() fails as if the gatekeeper were down (nothing is sent). */
  unreachable = false;
  /** How many ready() checks failed because `unreachable` was set (each is one apply attempt refused). */
  refusedReady = 0;
  private gate: Promise<void> | undefined;
  private openGate: (() => void) | undefined;
  private readonly waiters: Array<() => void> = [];

  /** From now on applies wait until `release()`. */
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

  /** Resolves once `count` actions were received. */
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

  /** How many times action `actionId` of `workspaceId` reached this gatekeeper. */
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

  /** ApplyActions: each action in order (running, then its answer); stops at the first failure. */
  async applyRun(gatekeeper: string, request: ApplyActionsRequest, watch: RunWatch): Promise<RunEnd> {
    this.runs.push(request);
    const ids = request.actions.map((a) => a.actionId);
    let announcedUpTo = -1; // index of the last action `running` was sent for
    for (const [i, a] of request.actions.entries()) {
      const unit = this.together.get(`${request.workspaceId}/${a.actionId}`) ?? 1;
      for (let k = Math.max(i, announcedUpTo + 1); k < Math.min(ids.length, i + unit); k++) {
        watch.onRunning?.(ids[k]!, 0);
        announcedUpTo = k;
      }
      let response: ApplyActionResponse;
      try {
        response = await this.apply(gatekeeper, {
          workspaceId: request.workspaceId,
          binding: request.binding,
          url: request.url,
          trust: request.trust,
          actionId: a.actionId,
          localId: a.localId,
          payloadJson: a.payloadJson,
          dependencyResults: a.dependencyResults,
        });
      } catch (err) {
        const e = err instanceof GatekeeperCallError ? err : new GatekeeperCallError(String(err), true);
        const alsoLost = ids.slice(i + 1, announcedUpTo + 1);
        return {
          lost: { actionId: a.actionId, error: e },
          ...(alsoLost.length > 0 ? { alsoLost } : {}),
          notSent: ids.slice(Math.max(i, announcedUpTo) + 1),
        };
      }
      watch.onOutcome(a.actionId, response);
      // After an ok=false outcome nothing without an outcome was performed, announced or not.
      if (!response.ok) return { notSent: ids.slice(i + 1) };
    }
    return { notSent: [] };
  }

  async notifyRejected(_gatekeeper: string, request: ActionRejectedRequest): Promise<void> {
    this.rejected.push(request);
  }

  close(): void {}
}
