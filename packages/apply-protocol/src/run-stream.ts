/**
 * Reads one Gatekeeper.ApplyActions stream (gatekeeper.proto) on the caller's side: which action
 * is in flight, each outcome as it arrives, and, when the stream breaks or falls silent, which
 * action's outcome is unknown and which were certainly not sent (the caller half of the apply
 * protocol). `GrpcGatekeeperApplier.applyRun` (caller.ts) opens the call; this file decides what its messages mean.
 */
import type { ApplyActionResponse, ApplyActionsProgress } from "@gatehouse/proto";
import { type ClientReadableStream, type ServiceError, status } from "@grpc/grpc-js";
import { formatMs, GatekeeperCallError, REFUSED_BEFORE_ACTING } from "./call-error.ts";

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
  /**
   * Actions after `lost` that were in flight with it (a gatekeeper that performs several in one
   * external call, e.g. git's one ref update for a run of commits): outcome unknown as well.
   */
  alsoLost?: number[];
  /**
   * Actions of the run certainly not sent, safe to send later: those never started (no `running`
   * heard for them), and those started without an outcome after an ok=false outcome or a refusal
   * status (a unit performed in one external call announces each; it was not performed).
   */
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
 * call and not the message back). Several actions may be in flight at once (`running` heard for
 * each, outcomes still to come, in order): all of them are then lost (`lost` and `alsoLost`).
 * After an ok=false outcome, actions without an outcome were not performed: `notSent`. `lost.error.requestMaybeSent` is false only when the gatekeeper
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
    let inFlight: number[] = []; // heard `running`, no outcome yet, in run order
    let heard = false;
    let failed = false; // an ok=false outcome came: nothing more is performed
    let lost: RunEnd["lost"];
    let alsoLost: number[] = [];
    let settled = false;
    let silence: NodeJS.Timeout | undefined;
    let max: NodeJS.Timeout | undefined;
    const end = (): RunEnd => ({
      lost,
      ...(alsoLost.length > 0 ? { alsoLost } : {}),
      notSent: actionIds.slice(next),
    });
    const settle = (err: unknown) => {
      if (settled) return;
      settled = true;
      clearTimeout(silence);
      clearTimeout(max);
      if (err) reject(err);
      else resolve(end());
    };
    /** Actions heard running without an outcome go back to "not sent" (the gatekeeper says so). */
    const unstart = () => {
      next -= inFlight.length;
      inFlight = [];
    };
    /**
     * Marks lost the actions the gatekeeper may be performing now: those in flight, or, between an
     * outcome and the next `running`, the next one (none after a failure or at the end).
     */
    const lose = (why: string, error?: (msg: string) => GatekeeperCallError) => {
      if (lost || failed) return;
      if (inFlight.length === 0) {
        const upcoming = actionIds[next];
        if (upcoming === undefined) return;
        inFlight = [upcoming];
        next++;
      }
      const [actionId, ...others] = inFlight as [number, ...number[]];
      inFlight = [];
      const together = others.length > 0 ? ` (with ${others.join(", ")}, performed together)` : "";
      // "… ApplyActions of action 37" names its one action already.
      const who = what.endsWith(`of action ${actionId}`) ? what : `${what}: action ${actionId}`;
      const message = `${who}${together}: ${why}`;
      lost = { actionId, error: error ? error(message) : new GatekeeperCallError(message, true) };
      alsoLost = others;
    };
    const abandon = (why: string, error?: (msg: string) => GatekeeperCallError) => {
      lose(why, error);
      call.cancel();
      settle(null);
    };
    const expectWithin = (promisedMs: number) => {
      clearTimeout(silence);
      const allowMs = promisedMs + run.graceMs;
      silence = setTimeout(
        () =>
          abandon(
            `the gatekeeper stopped reporting on the run (nothing for ${formatMs(allowMs)}); the call was lost`,
          ),
        allowMs,
      );
    };
    /** The wait for the first action in flight, from when it became first. */
    const startMax = () => {
      clearTimeout(max);
      if (inFlight.length === 0) return;
      max = setTimeout(
        () =>
          abandon(
            `the gatekeeper was still performing it after ${formatMs(run.maxMs)}, the longest GATEKEEPER_APPLY_MAX lets the worker wait for "${run.gatekeeper}"; the call may still be running and may yet succeed, so the outcome is unknown: check the external system before acting again`,
            (m) => new GatekeeperCallError(m, true, status.DEADLINE_EXCEEDED, true),
          ),
        run.maxMs,
      );
    };
    /**
     * Accepts a `running` for an action in flight or the next one, and an outcome for the first in
     * flight (or the next one); anything else abandons the call.
     */
    const track = (actionId: number, outcome: boolean): boolean => {
      if (outcome ? inFlight[0] === actionId : inFlight.includes(actionId)) return true;
      if (!failed && actionIds[next] === actionId && (!outcome || inFlight.length === 0)) {
        inFlight.push(actionId);
        next++;
        if (inFlight.length === 1) startMax();
        return true;
      }
      abandon(
        `the gatekeeper reported on action ${actionId} out of order (the run is ${actionIds.join(", ")}, performed in that order); the call was abandoned and what was in flight counts as lost`,
      );
      return false;
    };
    expectWithin(0);
    call.on("data", (m: ApplyActionsProgress) => {
      if (settled || !m.event) return;
      try {
        if (!track(m.actionId, m.event.$case === "outcome")) return;
        heard = true;
        if (m.event.$case === "running") {
          expectWithin(m.event.running.nextWithinMs);
          watch.onRunning?.(m.actionId, m.event.running.elapsedMs);
        } else {
          inFlight.shift();
          if (!m.event.outcome.ok) {
            failed = true;
            unstart();
          }
          startMax();
          expectWithin(0); // the next message (or the end) comes at once
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
      // A gatekeeper's own "answer lost" (the kit's AnswerLost) explains itself; other errors name their status.
      const answer =
        err.code === status.UNAVAILABLE && /outcome is unknown/.test(err.details ?? "")
          ? err.details
          : `failed with ${status[err.code] ?? err.code}: ${err.details}`;
      if (!heard && refused) {
        return settle(
          new GatekeeperCallError(`${what} ${answer} (no action of the run was started)`, false, err.code),
        );
      }
      if (refused) {
        // A refusal: the first in flight was not performed, nor anything after it.
        const first = inFlight[0];
        unstart();
        if (first !== undefined) {
          next++;
          lost = {
            actionId: first,
            error: new GatekeeperCallError(`${what}: action ${first}: ${answer}`, false, err.code),
          };
        }
        return settle(null);
      }
      lose(answer, (m) => new GatekeeperCallError(m, true, err.code));
      settle(null);
    });
    call.on("end", () => {
      if (inFlight.length > 0) lose("the stream ended without its outcome");
      settle(null);
    });
  });
}
