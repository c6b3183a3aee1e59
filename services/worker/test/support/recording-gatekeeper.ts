/**
 * FAKE gatekeeper (the real one needs an MCP server): an in-process GatekeeperApplier that records
 * every ApplyAction / ActionRejected call and answers as told — ok by default, a failure, or a
 * block until released. It stands in for the external system: `applied` is what "reached" it.
 */
import type { GatekeeperApplier } from "@gatehouse/approval-core";
import { GatekeeperCallError } from "@gatehouse/approval-core";
import type { ActionRejectedRequest, ApplyActionRequest, ApplyActionResponse } from "@gatehouse/proto";

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

  async notifyRejected(_gatekeeper: string, request: ActionRejectedRequest): Promise<void> {
    this.rejected.push(request);
  }

  close(): void {}
}
