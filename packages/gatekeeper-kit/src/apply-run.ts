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
 * Wraps `fn` (the gatekeeper's per-action apply, as given to `applyStreamHandler`) as the grpc-js
 * handler of ApplyActions.
 *
 * - Validates the request first (`checkRun`): INVALID_ARGUMENT naming the field, before any `running`.
 * - For each action in order: sends `{actionId, running: {elapsedMs: 0, nextWithinMs}}`, calls `fn`
 *   with an ApplyActionRequest built from the run (`dependencyResults` = the action's own plus the
 *   `resultJson` of every earlier action of the run that applied, by local id, so a provisional id
 *   "~3" resolves), repeats `running` every `progressEveryMs` while it runs, then sends
 *   `{actionId, outcome}`. After an `ok=false` outcome, or the last action, the stream ends.
 * - `fn` throwing ends the stream with `toServiceError(err)`; the counter gets its status, as in
 *   `applyStreamHandler`.
 * - The caller leaving: the action in flight goes on to its end (`apply.caller_left` logged with
 *   its id and how many were not started, then `apply.caller_gone` with its `ok`); no further action starts.
 *
 * @param deps metrics (`rpcs`, `rpcSeconds`, method label "ApplyActions", once per run) and logger.
 * @param fn performs one action once; resolves with the known outcome.
 * @param progressEveryMs interval of `running` messages (default APPLY_PROGRESS_EVERY_MS).
 */
export function applyRunHandler(
  deps: Omit<UnaryDeps, "logger"> & { logger: ApplyLogger },
  fn: (req: ApplyActionRequest, ctx: ApplyContext) => Promise<ApplyActionResponse>,
  progressEveryMs: number = APPLY_PROGRESS_EVERY_MS,
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
      for (const a of run.actions) {
        if (left()) return;
        inFlight = a.actionId;
        started++;
        const deadline = Math.min(callDeadline, maxMs === undefined ? Infinity : Date.now() + maxMs);
        const req: ApplyActionRequest = {
          workspaceId,
          binding: run.binding,
          url: run.url,
          trust: run.trust,
          actionId: a.actionId,
          localId: a.localId,
          payloadJson: a.payloadJson,
          dependencyResults: { ...a.dependencyResults, ...results },
        };
        const outcome = await reportWhileRunning(
          (running) => {
            if (!left()) call.write({ actionId: a.actionId, event: { $case: "running", running } });
          },
          progressEveryMs,
          () => fn(req, { deadline }),
        );
        inFlight = undefined;
        if (left()) {
          logCallerGone(deps.logger, workspaceId, a.actionId, outcome.ok);
          return;
        }
        call.write({ actionId: a.actionId, event: { $case: "outcome", outcome } });
        if (!outcome.ok) return;
        if (a.localId) results[a.localId] = outcome.resultJson;
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
