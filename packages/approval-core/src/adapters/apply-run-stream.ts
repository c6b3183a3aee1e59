/**
 * Reads one Gatekeeper.ApplyActions stream (gatekeeper.proto) on the caller's side: which action
 * is in flight, each outcome as it arrives, and, when the stream breaks or falls silent, which
 * action's outcome is unknown and which were certainly not sent. `GrpcGatekeeperApplier.applyRun`
 * opens the call; this file decides what its messages mean.
 */
import type { ApplyActionResponse, ApplyActionsProgress } from "@gatehouse/proto";
import { type ClientReadableStream, type ServiceError, status } from "@grpc/grpc-js";
import { formatMs, GatekeeperCallError, REFUSED_BEFORE_ACTING } from "./gatekeeper-call-error.ts";

/** What `GatekeeperApplier.applyRun` reports while the run goes on. */
export interface RunWatch {
  /** Each `running` message: the action in flight and ms since the gatekeeper started it. */
  onRunning?(actionId: number, elapsedMs: number): void;
  /** Each action's known answer, in run order (the last may be ok=false; then the run ends). */
  onOutcome(actionId: number, response: ApplyActionResponse): void;
}

/** How a run ended (when it did not throw). */
export interface RunEnd {
  /** The action that was in flight when the call was lost, or still running at the maximum: outcome unknown. */
  lost?: { actionId: number; error: GatekeeperCallError };
  /** Actions of the run that were never started (no `running` heard for them): certainly not sent, safe to send later. */
  notSent: number[];
}

/** What `followRun` needs to know about the call it reads. */
export interface RunCall {
  /** The run's action ids, in request order. */
  actionIds: number[];
  /** Longest wait for one action of the run, ms from its first `running`. */
  maxMs: number;
  /** Silence tolerated beyond the gatekeeper's promise (`next_within_ms`), ms. */
  graceMs: number;
  /** Names the call in messages, e.g. `gatekeeper "mcp" ApplyActions of actions 4–9`. */
  what: string;
  /** The gatekeeper kind, for the GATEKEEPER_APPLY_MAX hint. */
  gatekeeper: string;
}

/**
 * Follows `call` to its end. Resolves with the actions never started (`notSent`) and, when the
 * call broke while the gatekeeper may have been performing an action, that action as `lost`: the
 * one in flight, or, when the stream broke between an outcome and the next `running`, the next
 * one (the gatekeeper sends `running` before it acts, but a dying connection may have carried the
 * call and not the message back). `lost.error.requestMaybeSent` is false only when the gatekeeper
 * answered that action with a refusal status (INVALID_ARGUMENT, PERMISSION_DENIED, ...), which
 * means it was not performed; `stillRunning` when it was still running at `maxMs`.
 * A watch callback that throws cancels the call; the promise then rejects with that error.
 * @throws GatekeeperCallError (requestMaybeSent=false) when the gatekeeper refused the run with a
 *   refusal status before any `running`.
 */
export function followRun(
  call: ClientReadableStream<ApplyActionsProgress>,
  run: RunCall,
  watch: RunWatch,
): Promise<RunEnd> {
  const { actionIds, what } = run;
  return new Promise((resolve, reject) => {
    let next = 0; // index of the next action to start
    let current: number | undefined; // heard `running`, no outcome yet
    let heard = false;
    let failed = false; // an ok=false outcome came: nothing more is started
    let lost: RunEnd["lost"];
    let settled = false;
    let silence: NodeJS.Timeout | undefined;
    let max: NodeJS.Timeout | undefined;
    const rest = () => actionIds.slice(next);
    const settle = (err: unknown, end?: RunEnd) => {
      if (settled) return;
      settled = true;
      clearTimeout(silence);
      clearTimeout(max);
      if (err) reject(err);
      else resolve(end as RunEnd);
    };
    /** The action the gatekeeper may be performing now, marked lost (none after a failure or at the end). */
    const lose = (why: (actionId: number) => string, error?: (msg: string) => GatekeeperCallError) => {
      if (lost || failed) return;
      const actionId = current ?? actionIds[next];
      if (actionId === undefined) return;
      if (current === undefined) next++;
      current = undefined;
      const message = `${what}: action ${actionId}: ${why(actionId)}`;
      lost = { actionId, error: error ? error(message) : new GatekeeperCallError(message, true) };
    };
    const expectWithin = (promisedMs: number) => {
      clearTimeout(silence);
      const allowMs = promisedMs + run.graceMs;
      silence = setTimeout(() => {
        lose(
          () =>
            `the gatekeeper stopped reporting on the run (nothing for ${formatMs(allowMs)}); the call was lost`,
        );
        call.cancel();
        settle(null, { lost, notSent: rest() });
      }, allowMs);
    };
    const startMax = () => {
      clearTimeout(max);
      max = setTimeout(() => {
        lose(
          () =>
            `the gatekeeper was still performing it after ${formatMs(run.maxMs)}, the longest GATEKEEPER_APPLY_MAX lets the worker wait for "${run.gatekeeper}"; it may still be running and may yet succeed, so the outcome is unknown: check the external system before acting again`,
          (m) => new GatekeeperCallError(m, true, status.DEADLINE_EXCEEDED, true),
        );
        call.cancel();
        settle(null, { lost, notSent: rest() });
      }, run.maxMs);
    };
    /** Accepts a message about `actionId` when it is the one in flight or the next to start. */
    const track = (actionId: number): boolean => {
      if (current === actionId) return true;
      if (current === undefined && !failed && actionIds[next] === actionId) {
        current = actionId;
        next++;
        startMax();
        return true;
      }
      lose(
        () =>
          `the gatekeeper reported on action ${actionId} out of order (it must perform ${actionIds.join(", ")} one after another); the call was abandoned and the action in flight counts as lost`,
      );
      call.cancel();
      settle(null, { lost, notSent: rest() });
      return false;
    };
    expectWithin(0);
    call.on("data", (m: ApplyActionsProgress) => {
      if (settled || !m.event) return;
      try {
        if (!track(m.actionId)) return;
        heard = true;
        if (m.event.$case === "running") {
          expectWithin(m.event.running.nextWithinMs);
          watch.onRunning?.(m.actionId, m.event.running.elapsedMs);
        } else {
          current = undefined;
          clearTimeout(max);
          if (!m.event.outcome.ok) failed = true;
          expectWithin(0); // the next `running` (or the end) comes at once
          watch.onOutcome(m.actionId, m.event.outcome);
        }
      } catch (err) {
        call.cancel();
        settle(err);
      }
    });
    call.on("error", (err: ServiceError) => {
      if (settled) return;
      const refused = REFUSED_BEFORE_ACTING.has(err.code);
      const answer = `failed with ${status[err.code] ?? err.code}: ${err.details}`;
      if (!heard && refused) {
        return settle(
          new GatekeeperCallError(`${what} ${answer} (no action of the run was started)`, false, err.code),
        );
      }
      if (current === undefined && refused) return settle(null, { notSent: rest() }); // nothing in flight
      // A refusal of the action in flight means it was not performed; anything else: unknown.
      lose(
        () => answer,
        (m) => new GatekeeperCallError(m, !refused, err.code),
      );
      settle(null, { lost, notSent: rest() });
    });
    call.on("end", () => {
      if (current !== undefined) lose(() => "the stream ended without its outcome");
      settle(null, { lost, notSent: rest() });
    });
  });
}
