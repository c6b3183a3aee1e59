/**
 * The server half of the apply protocol (gatekeeper.proto ApplyAction / ApplyActions, both server
 * streaming), used by every gatekeeper through the kit; the caller half is caller.ts.
 *
 * ApplyAction (`applyStreamHandler`): the gatekeeper's apply function runs once; meanwhile the
 * caller hears `running` at once and then every `progressEveryMs`, so it can tell a long call from
 * a lost one; the outcome ends the stream.
 *
 * ApplyActions (`applyRunHandler`): a run of one binding's approved actions performed one after
 * another, in request order, through the same per-action apply function. Per action the caller
 * hears `{actionId, running}` before the function is called (and again every `progressEveryMs`
 * while it runs), then `{actionId, outcome}`. The run stops after the first `ok=false` outcome; the
 * stream then ends and the rest are never sent. A thrown error ends the stream with its status (the
 * caller counts the action in flight as lost unless the status is a refusal, and the rest as not
 * sent).
 *
 * ```ts
 * applyAction: applyStreamHandler(deps, (req, { deadline }) => applyAction(req, deadline)),
 * applyActions: applyRunHandler(deps, (req, { deadline }) => applyAction(req, deadline)),
 * ```
 *
 * The caller going away (it gave up at its maximum, or its worker died) never cancels the apply in
 * flight: once the external call may have been made, stopping half-way would not make the outcome
 * known. The function runs to its end; `apply.caller_left` is logged when the caller goes, and
 * `apply.caller_gone` with the outcome (`ok`) when it ends, for operators. No further action of a
 * run is started.
 *
 * How a gatekeeper's errors meet the protocol is the `errors` of the deps (`ApplyErrors`): which
 * error proves nothing was sent (the outcome `{ok: false}`, recorded failed) and which status any
 * other error ends the stream with. The gatekeeper kit supplies its own (NotSent, toServiceError).
 */
import type {
  ApplyActionProgress,
  ApplyActionRequest,
  ApplyActionResponse,
  ApplyActionRunning,
  ApplyActionsProgress,
  ApplyActionsRequest,
} from "@gatehouse/proto";
import {
  type handleServerStreamingCall,
  type ServerWritableStream,
  type ServiceError,
  status,
} from "@grpc/grpc-js";
import { APPLY_MAX_MS_METADATA, APPLY_PROGRESS_EVERY_MS } from "./constants.ts";

/** How a gatekeeper's errors meet the apply protocol (the gatekeeper kit passes its own). */
export interface ApplyErrors {
  /**
   * The message of `err` when it proves the request never reached the external system (the kit's
   * `NotSent`): the outcome is then `{ok: false, error: message}`, recorded "failed". Else undefined.
   */
  notSentMessage(err: unknown): string | undefined;
  /** The status any other error ends the stream with (a refusal status only before the external call). */
  toStatus(err: unknown): Partial<ServiceError>;
  /** Logs an error nobody expected (never its message, which may quote external data). */
  logUnexpected(logger: ApplyLogger, method: string, err: unknown): void;
  /** The error a request the protocol refuses before acting is thrown as (status INVALID_ARGUMENT). */
  invalidRequest(message: string): Error;
}

/** The metrics the handlers keep: an RPC counter by method and status code, and a latency timer. */
export interface ApplyMetrics {
  rpcs: { inc(labels: { method: string; code: string }): void };
  rpcSeconds: { startTimer(labels: { method: string }): () => void };
}

/** What `applyStreamHandler` and `applyRunHandler` need. */
export interface ApplyServerDeps {
  metrics: ApplyMetrics;
  logger: ApplyLogger;
  errors: ApplyErrors;
}

/** What the apply function gets besides the request. */
export interface ApplyContext {
  /**
   * When the caller stops waiting (epoch ms; `Infinity` when it set no deadline). An external call
   * that cannot end by then may still be bounded by it, e.g. as a request timeout.
   */
  deadline: number;
}

/** The logging the handlers need: a pino `Logger` fits. */
export interface ApplyLogger {
  error(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

/**
 * Wraps `fn` as the grpc-js handler of ApplyAction.
 *
 * - Sends `{running: {elapsedMs: 0, nextWithinMs}}` at once, then again every `progressEveryMs`
 *   until `fn` settles.
 * - `fn` resolving sends `{outcome}` and ends the stream; the counter gets `code: "OK"`.
 * - `fn` throwing a "not sent" error (`errors.notSentMessage`: nothing reached the system) sends the outcome
 *   `{ok: false, error}`, recorded "failed".
 * - `fn` throwing anything else ends the stream with `errors.toStatus(err)` (the kit: a `GatekeeperError`
 *   keeps its message and status; anything else is INTERNAL and logged without its message).
 *   Use a refusal status (INVALID_ARGUMENT, PERMISSION_DENIED, ...) only before the external call.
 *
 * @param deps metrics (`rpcs`, `rpcSeconds`, method label "ApplyAction"), logger and errors.
 * @param fn performs the action once; resolves with the known outcome.
 * @param progressEveryMs interval of `running` messages (default APPLY_PROGRESS_EVERY_MS).
 */
export function applyStreamHandler(
  deps: ApplyServerDeps,
  fn: (req: ApplyActionRequest, ctx: ApplyContext) => Promise<ApplyActionResponse>,
  progressEveryMs: number = APPLY_PROGRESS_EVERY_MS,
): handleServerStreamingCall<ApplyActionRequest, ApplyActionProgress> {
  const method = "ApplyAction";
  return (call: ServerWritableStream<ApplyActionRequest, ApplyActionProgress>) => {
    const stop = deps.metrics.rpcSeconds.startTimer({ method });
    let gone = false;
    let settled = false;
    const deadline = deadlineOf(call);
    const { workspaceId, actionId } = call.request;
    call.on("cancelled", () => {
      if (settled) return; // grpc-js may report a close after the outcome was sent
      gone = true;
      deps.logger.warn(
        { component: "grpc", event: "apply.caller_left", workspaceId, actionId },
        "the caller stopped waiting for the apply; it goes on to its end",
      );
    });
    reportWhileRunning(
      (running) => {
        if (!gone && !call.cancelled) call.write({ event: { $case: "running", running } });
      },
      progressEveryMs,
      () => notSentAsFailure(fn(call.request, { deadline }), deps.errors),
    ).then(
      (outcome) => {
        settled = true;
        stop();
        deps.metrics.rpcs.inc({ method, code: "OK" });
        if (gone || call.cancelled) {
          logCallerGone(deps.logger, workspaceId, actionId, outcome.ok);
          return;
        }
        call.write({ event: { $case: "outcome", outcome } });
        call.end();
      },
      (err: unknown) => {
        settled = true;
        stop();
        endWithError(call, deps, method, err, gone);
      },
    );
  };
}

/**
 * Runs `fn` once while reporting it in flight: `report` gets `{elapsedMs: 0, nextWithinMs}` at
 * once (before `fn` starts), then `{elapsedMs, nextWithinMs: everyMs}` every `everyMs` ms until
 * `fn` settles. @returns what `fn` returns (or its rejection).
 */
export async function reportWhileRunning<T>(
  report: (running: ApplyActionRunning) => void,
  everyMs: number,
  fn: () => Promise<T>,
): Promise<T> {
  const started = Date.now();
  const beat = () => report({ elapsedMs: Date.now() - started, nextWithinMs: everyMs });
  beat();
  const timer = setInterval(beat, everyMs);
  try {
    return await fn();
  } finally {
    clearInterval(timer);
  }
}

/**
 * `apply` settled the way the apply protocol records it: a "not sent" rejection (the request
 * provably never reached the system, `errors.notSentMessage`) becomes the outcome `{ok: false,
 * error: its message}`, so the action is recorded "failed"; any other rejection passes through
 * (lost unless it is a refusal).
 */
export function notSentAsFailure(
  apply: Promise<ApplyActionResponse>,
  errors: Pick<ApplyErrors, "notSentMessage">,
): Promise<ApplyActionResponse> {
  return apply.catch((err: unknown) => {
    const message = errors.notSentMessage(err);
    if (message !== undefined) return { ok: false, resultJson: "", error: message };
    throw err;
  });
}

/** The caller's deadline of a server call, epoch ms; `Infinity` when it set none. */
function deadlineOf(call: { getDeadline(): Date | number }): number {
  const raw = call.getDeadline();
  return raw instanceof Date ? raw.getTime() : Number.isFinite(raw) ? Number(raw) : Infinity;
}

/** Logs `apply.caller_gone`: an apply ended (`ok`) after its caller stopped waiting. */
function logCallerGone(logger: ApplyLogger, workspaceId: string, actionId: number, ok: boolean): void {
  logger.warn(
    { component: "grpc", event: "apply.caller_gone", workspaceId, actionId, ok },
    "the apply finished after its caller stopped waiting; its outcome stays unknown in the log",
  );
}

/**
 * Ends a streaming apply call with `errors.toStatus(err)` (nothing is sent when the caller is
 * `gone`), counts its status under `method` and logs an unexpected error without its message.
 */
function endWithError(
  call: { emit(event: "error", err: Partial<ServiceError>): unknown; cancelled: boolean },
  deps: ApplyServerDeps,
  method: string,
  err: unknown,
  gone: boolean,
): void {
  const se = deps.errors.toStatus(err);
  deps.metrics.rpcs.inc({ method, code: status[se.code ?? status.INTERNAL] ?? "UNKNOWN" });
  deps.errors.logUnexpected(deps.logger, method, err);
  if (gone || call.cancelled) return;
  call.emit("error", se);
}

/**
 * Checks an ApplyActions request before anything is performed.
 * @param invalid makes the error to throw (status INVALID_ARGUMENT), e.g. the kit's InvalidRequest.
 * @throws what `invalid` makes, naming the field: `workspace_id` or `binding` empty, `actions` empty, an
 *   `actions[i].action_id` not positive or not greater than the one before it.
 */
export function checkRun(req: ApplyActionsRequest, invalid: (message: string) => Error): void {
  if (!req.workspaceId) throw invalid("workspace_id is empty; send the workspace of the run");
  if (!req.binding) throw invalid("binding is empty; send the binding every action of the run belongs to");
  if (req.actions.length === 0) {
    throw invalid("actions is empty; a run has at least one action (use ApplyAction for one)");
  }
  let previous = 0;
  req.actions.forEach((a, i) => {
    if (!(a.actionId > previous)) {
      throw invalid(
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
 * - `fn` (or `units.apply`) throwing a "not sent" error (nothing reached the system) is the outcome
 *   `{ok: false, error}` of the action (of a unit: its first action), and the run ends there.
 * - `fn` throwing anything else ends the stream with `errors.toStatus(err)`; the counter gets its status, as in
 *   `applyStreamHandler`.
 * - The caller leaving: the action (or unit) in flight goes on to its end (`apply.caller_left`
 *   logged with its id and how many were not started, then `apply.caller_gone` with its `ok`); no
 *   further action starts.
 *
 * @param deps metrics (`rpcs`, `rpcSeconds`, method label "ApplyActions", once per run), logger and errors.
 * @param fn performs one action once; resolves with the known outcome.
 * @param progressEveryMs interval of `running` messages (default APPLY_PROGRESS_EVERY_MS).
 * @param units optional grouping of consecutive actions into one external call.
 */
export function applyRunHandler(
  deps: ApplyServerDeps,
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
      checkRun(run, deps.errors.invalidRequest);
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
            if (size === 1 || !units)
              return [await notSentAsFailure(fn(unit[0]!, { deadline }), deps.errors)];
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
              .catch((err: unknown) => notSentAsFailure(Promise.reject(err), deps.errors).then((o) => [o]));
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
