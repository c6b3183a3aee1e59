/**
 * The ApplyActions handler every gatekeeper shares (gatekeeper.proto `ApplyActions`, server
 * streaming): a run of one binding's approved actions performed one after another, in request
 * order, through the same per-action apply function `applyStreamHandler` wraps.
 *
 * ```ts
 * applyActions: applyRunHandler(deps, (req, { deadline }) => applyAction(req, deadline)),
 * ```
 *
 * Per action the caller hears `{actionId, running}` before the function is called (and again
 * every `progressEveryMs` while it runs), then `{actionId, outcome}`. The run stops after the
 * first `ok=false` outcome; the stream then ends and the rest are never sent. A thrown error ends
 * the stream with its status (the caller counts the action in flight as lost unless the status is
 * a refusal, and the rest as not sent). The caller leaving never cancels the action in flight (as
 * with ApplyAction), but no further action is started.
 */
import type {
  ApplyActionRequest,
  ApplyActionResponse,
  ApplyActionsProgress,
  ApplyActionsRequest,
} from "@gatehouse/proto";
import type { handleServerStreamingCall, ServerWritableStream } from "@grpc/grpc-js";
import {
  APPLY_PROGRESS_EVERY_MS,
  type ApplyContext,
  type ApplyLogger,
  deadlineOf,
  endWithError,
  logCallerGone,
  notSentAsFailure,
  reportWhileRunning,
} from "./apply-stream.ts";
import { InvalidRequest } from "./errors.ts";
import type { UnaryDeps } from "./unary.ts";

/**
 * Metadata key of ApplyActions with the caller's longest wait for one action, in ms (decimal):
 * each action's `ApplyContext.deadline` is its start plus this (and never past the call's own
 * deadline). Without it only the call's deadline bounds the actions. Must match approval-core's
 * APPLY_MAX_MS_METADATA (gatekeeper.proto documents it).
 */
export const APPLY_MAX_MS_METADATA = "gatehouse-apply-max-ms";

/**
 * Checks an ApplyActions request before anything is performed.
 * @throws InvalidRequest naming the field: `workspace_id` or `binding` empty, `actions` empty, an
 *   `actions[i].action_id` not positive or not greater than the one before it.
 */
export function checkRun(req: ApplyActionsRequest): void {
  if (!req.workspaceId) throw new InvalidRequest("workspace_id is empty; send the workspace of the run");
  if (!req.binding)
    throw new InvalidRequest("binding is empty; send the binding every action of the run belongs to");
  if (req.actions.length === 0) {
    throw new InvalidRequest("actions is empty; a run has at least one action (use ApplyAction for one)");
  }
  let previous = 0;
  req.actions.forEach((a, i) => {
    if (!(a.actionId > previous)) {
      throw new InvalidRequest(
        i === 0
          ? `actions[0].action_id is ${a.actionId}; action ids are positive`
          : `actions[${i}].action_id ${a.actionId} does not follow actions[${i - 1}].action_id ${previous}; list the run in submission order (increasing action ids, each once)`,
      );
    }
    previous = a.actionId;
  });
}

/** The caller's per-action maximum from APPLY_MAX_MS_METADATA, ms; undefined when absent or not a positive number. */
function actionMaxMs(
  call: ServerWritableStream<ApplyActionsRequest, ApplyActionsProgress>,
): number | undefined {
  const v = Number(call.metadata.get(APPLY_MAX_MS_METADATA)[0]);
  return Number.isFinite(v) && v > 0 ? v : undefined;
}

/**
 * What a gatekeeper that performs several consecutive actions of a run in one external call gives
 * `applyRunHandler` (gatekeeper-git: a run of commits on one branch, one ref update).
 */
export interface RunUnits {
  /**
   * How many actions from `reqs[from]` on form one unit, at least 1 (1: that action alone, through
   * the per-action function). Must not throw; an action it cannot vouch for ends the unit before it.
   */
  sizeAt(reqs: readonly ApplyActionRequest[], from: number): number;
  /**
   * Performs one unit of two or more actions. The kit has sent `running` for the first already;
   * before the external call that may perform the others, call `ctx.starting(actionIds)` with them
   * (in order), so the caller hears `running` for each first. Resolves with one outcome per action
   * in order, ending at the first ok=false (the actions after it were not performed); when all are
   * ok, one per action of the unit.
   * @throws like the per-action function: the stream ends with the error's status, and every action
   *   of the unit without an outcome counts as lost (a refusal status: only before any external call).
   */
  apply(
    reqs: ApplyActionRequest[],
    ctx: ApplyContext & { starting(actionIds: number[]): void },
  ): Promise<ApplyActionResponse[]>;
}

/**
 * Wraps `fn` (the gatekeeper's per-action apply, as given to `applyStreamHandler`) as the grpc-js
 * handler of ApplyActions.
 *
 * - Validates the request first (`checkRun`): INVALID_ARGUMENT naming the field, before any `running`.
 * - For each action in order: sends `{actionId, running: {elapsedMs: 0, nextWithinMs}}`, calls `fn`
 *   with an ApplyActionRequest built from the run (`dependencyResults` = the action's own plus the
 *   `resultJson` of every earlier action of the run that applied, by local id, so a provisional id
 *   "~3" resolves), repeats `running` every `progressEveryMs` while it runs, then sends
 *   `{actionId, outcome}`. After an `ok=false` outcome, or the last action, the stream ends.
 * - With `units`, consecutive actions it groups are performed by `units.apply` in one go: `running`
 *   for each (the first at once, the others when `starting` names them; repeated for the first
 *   without an outcome), then their outcomes in order.
 * - `fn` (or `units.apply`) throwing `NotSent` (nothing reached the system) is the outcome
 *   `{ok: false, error}` of the action (of a unit: its first action), and the run ends there.
 * - `fn` throwing anything else ends the stream with `toServiceError(err)`; the counter gets its status, as in
 *   `applyStreamHandler`.
 * - The caller leaving: the action (or unit) in flight goes on to its end (`apply.caller_left`
 *   logged with its id and how many were not started, then `apply.caller_gone` with its `ok`); no
 *   further action starts.
 *
 * @param deps metrics (`rpcs`, `rpcSeconds`, method label "ApplyActions", once per run) and logger.
 * @param fn performs one action once; resolves with the known outcome.
 * @param progressEveryMs interval of `running` messages (default APPLY_PROGRESS_EVERY_MS).
 * @param units optional grouping of consecutive actions into one external call.
 */
export function applyRunHandler(
  deps: Omit<UnaryDeps, "logger"> & { logger: ApplyLogger },
  fn: (req: ApplyActionRequest, ctx: ApplyContext) => Promise<ApplyActionResponse>,
  progressEveryMs: number = APPLY_PROGRESS_EVERY_MS,
  units?: RunUnits,
): handleServerStreamingCall<ApplyActionsRequest, ApplyActionsProgress> {
  const method = "ApplyActions";
  return (call: ServerWritableStream<ApplyActionsRequest, ApplyActionsProgress>) => {
    const stop = deps.metrics.rpcSeconds.startTimer({ method });
    const run = call.request;
    const { workspaceId } = run;
    let inFlight: number | undefined;
    let started = 0;
    let gone = false;
    let done = false;
    const left = () => gone || call.cancelled;
    call.on("cancelled", () => {
      if (done) return; // grpc-js may report a close after the stream ended
      gone = true;
      deps.logger.warn(
        {
          component: "grpc",
          event: "apply.caller_left",
          workspaceId,
          actionId: inFlight,
          notStarted: run.actions.length - started,
        },
        "the caller stopped waiting for the run; the action in flight goes on to its end, no further action is started",
      );
    });
    const perform = async () => {
      checkRun(run);
      const callDeadline = deadlineOf(call);
      const maxMs = actionMaxMs(call);
      const results: Record<string, string> = {};
      const reqs = run.actions.map(
        (a): ApplyActionRequest => ({
          workspaceId,
          binding: run.binding,
          url: run.url,
          trust: run.trust,
          actionId: a.actionId,
          localId: a.localId,
          payloadJson: a.payloadJson,
          dependencyResults: a.dependencyResults,
        }),
      );
      for (let i = 0; i < reqs.length; ) {
        if (left()) return;
        const size = Math.max(1, Math.min(units?.sizeAt(reqs, i) ?? 1, reqs.length - i));
        const unit = reqs.slice(i, i + size).map((r) => ({
          ...r,
          dependencyResults: { ...r.dependencyResults, ...results },
        }));
        i += size;
        inFlight = unit[0]!.actionId;
        started += size;
        const deadline = Math.min(callDeadline, maxMs === undefined ? Infinity : Date.now() + maxMs);
        let answered = 0; // outcomes of this unit so far: `running` repeats for the next one
        const send = (actionId: number, running: ApplyActionsProgress["event"]) => {
          if (!left()) call.write({ actionId, event: running });
        };
        const outcomes = await reportWhileRunning(
          (running) => send(unit[answered]?.actionId ?? inFlight!, { $case: "running", running }),
          progressEveryMs,
          async () => {
            if (size === 1 || !units) return [await notSentAsFailure(fn(unit[0]!, { deadline }))];
            const announced = new Set([unit[0]!.actionId]);
            const starting = (ids: number[]) => {
              for (const { actionId } of unit) {
                if (!ids.includes(actionId) || announced.has(actionId)) continue;
                announced.add(actionId);
                send(actionId, {
                  $case: "running",
                  running: { elapsedMs: 0, nextWithinMs: progressEveryMs },
                });
              }
            };
            // Not sent: the unit's first action failed, and nothing after it was performed.
            return units
              .apply(unit, { deadline, starting })
              .catch((err: unknown) => notSentAsFailure(Promise.reject(err)).then((o) => [o]));
          },
        );
        inFlight = undefined;
        checkUnitOutcomes(unit, outcomes);
        for (const [k, outcome] of outcomes.entries()) {
          const a = unit[k]!;
          answered = k + 1;
          if (left()) {
            logCallerGone(deps.logger, workspaceId, a.actionId, outcome.ok);
            continue;
          }
          call.write({ actionId: a.actionId, event: { $case: "outcome", outcome } });
          if (outcome.ok && a.localId) results[a.localId] = outcome.resultJson;
        }
        if (left() || outcomes.some((o) => !o.ok)) return;
      }
    };
    perform().then(
      () => {
        done = true;
        stop();
        deps.metrics.rpcs.inc({ method, code: "OK" });
        if (!left()) call.end();
      },
      (err: unknown) => {
        done = true;
        stop();
        endWithError(call, deps, method, err, gone);
      },
    );
  };
}

/**
 * A unit's outcomes: one per action, ending at the first ok=false, or one for each.
 * @throws Error (INTERNAL for the caller) naming the unit when the gatekeeper broke that rule.
 */
function checkUnitOutcomes(unit: ApplyActionRequest[], outcomes: ApplyActionResponse[]): void {
  const firstFailure = outcomes.findIndex((o) => !o.ok);
  const ok = firstFailure === -1 ? outcomes.length === unit.length : firstFailure === outcomes.length - 1;
  if (!ok) {
    throw new Error(
      `a unit of actions ${unit[0]?.actionId}..${unit.at(-1)?.actionId} answered ${outcomes.length} outcomes for ${unit.length} actions (one each, ending at the first failure)`,
    );
  }
}
