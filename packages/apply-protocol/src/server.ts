/**
 * The ApplyAction handler every gatekeeper shares (gatekeeper.proto `ApplyAction`, server
 * streaming): the gatekeeper's apply function runs once; meanwhile the caller hears `running`
 * at once and then every `progressEveryMs`, so it can tell a long call from a lost one; the
 * outcome ends the stream.
 *
 * ```ts
 * applyAction: applyStreamHandler(deps, (req, { deadline }) => applyAction(req, deadline)),
 * ```
 *
 * The caller going away (it gave up at its maximum, or its worker died) never cancels the apply:
 * once the external call may have been made, stopping half-way would not make the outcome known.
 * The function runs to its end; `apply.caller_left` is logged when the caller goes, and
 * `apply.caller_gone` with the outcome (`ok`) when it ends, for operators.
 */
import type {
  ApplyActionProgress,
  ApplyActionRequest,
  ApplyActionResponse,
  ApplyActionRunning,
} from "@gatehouse/proto";
import {
  type ClientReadableStream,
  type handleServerStreamingCall,
  type ServerWritableStream,
  type ServiceError,
  status,
} from "@grpc/grpc-js";
import { NotSent } from "./apply-outcome.ts";
import { toServiceError } from "./grpc-status.ts";
import { logUnexpectedError, type UnaryDeps, type UnaryLogger } from "./unary.ts";

/** How often `running` is repeated while an apply is in flight, in milliseconds. */
export const APPLY_PROGRESS_EVERY_MS = 2000;

/** What the apply function gets besides the request. */
export interface ApplyContext {
  /**
   * When the caller stops waiting (epoch ms; `Infinity` when it set no deadline). An external call
   * that cannot end by then may still be bounded by it, e.g. as a request timeout.
   */
  deadline: number;
}

/** The logging `applyStreamHandler` needs: a pino `Logger` fits. */
export interface ApplyLogger extends UnaryLogger {
  warn(obj: object, msg?: string): void;
}

/**
 * Wraps `fn` as the grpc-js handler of ApplyAction.
 *
 * - Sends `{running: {elapsedMs: 0, nextWithinMs}}` at once, then again every `progressEveryMs`
 *   until `fn` settles.
 * - `fn` resolving sends `{outcome}` and ends the stream; the counter gets `code: "OK"`.
 * - `fn` throwing `NotSent` (apply-outcome.ts: nothing reached the system) sends the outcome
 *   `{ok: false, error}`, recorded "failed".
 * - `fn` throwing anything else ends the stream with `toServiceError(err)` (a `GatekeeperError` keeps its message
 *   and status; anything else is INTERNAL and logged without its message, as `unaryHandler` does).
 *   Use a refusal status (INVALID_ARGUMENT, PERMISSION_DENIED, ...) only before the external call.
 *
 * @param deps metrics (`rpcs`, `rpcSeconds` as in `unaryHandler`, method label "ApplyAction") and logger.
 * @param fn performs the action once; resolves with the known outcome.
 * @param progressEveryMs interval of `running` messages (default APPLY_PROGRESS_EVERY_MS).
 */
export function applyStreamHandler(
  deps: Omit<UnaryDeps, "logger"> & { logger: ApplyLogger },
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
      () => notSentAsFailure(fn(call.request, { deadline })),
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
 * `apply` settled the way the apply protocol records it: a `NotSent` rejection (the request
 * provably never reached the system) becomes the outcome `{ok: false, error: its message}`, so the
 * action is recorded "failed"; any other rejection passes through (lost unless it is a refusal).
 */
export function notSentAsFailure(apply: Promise<ApplyActionResponse>): Promise<ApplyActionResponse> {
  return apply.catch((err: unknown) => {
    if (err instanceof NotSent) return { ok: false, resultJson: "", error: err.message };
    throw err;
  });
}

/** The caller's deadline of a server call, epoch ms; `Infinity` when it set none. */
export function deadlineOf(call: { getDeadline(): Date | number }): number {
  const raw = call.getDeadline();
  return raw instanceof Date ? raw.getTime() : Number.isFinite(raw) ? Number(raw) : Infinity;
}

/** Logs `apply.caller_gone`: an apply ended (`ok`) after its caller stopped waiting. */
export function logCallerGone(logger: ApplyLogger, workspaceId: string, actionId: number, ok: boolean): void {
  logger.warn(
    { component: "grpc", event: "apply.caller_gone", workspaceId, actionId, ok },
    "the apply finished after its caller stopped waiting; its outcome stays unknown in the log",
  );
}

/**
 * Ends a streaming apply call with `toServiceError(err)` (nothing is sent when the caller is
 * `gone`), counts its status under `method` and logs an unexpected error without its message.
 */
export function endWithError(
  call: { emit(event: "error", err: Partial<ServiceError>): unknown; cancelled: boolean },
  deps: Omit<UnaryDeps, "logger"> & { logger: ApplyLogger },
  method: string,
  err: unknown,
  gone: boolean,
): void {
  const se = toServiceError(err);
  deps.metrics.rpcs.inc({ method, code: status[se.code ?? status.INTERNAL] ?? "UNKNOWN" });
  logUnexpectedError(deps.logger, method, err);
  if (gone || call.cancelled) return;
  call.emit("error", se);
}

/**
 * Reads an ApplyAction stream (client side) to its outcome, with no limit on how long it runs:
 * for tests and simple tools. The lifecycle worker uses approval-core's GrpcGatekeeperApplier,
 * which also treats a silent stream as lost and bounds the wait.
 * @param onRunning called with each `running` message.
 * @returns the `outcome`. @throws the gRPC ServiceError the stream ended with, or an Error when it
 *   ended without an outcome.
 */
export function readApplyOutcome(
  call: ClientReadableStream<ApplyActionProgress>,
  onRunning?: (running: ApplyActionRunning) => void,
): Promise<ApplyActionResponse> {
  return new Promise((resolve, reject) => {
    let outcome: ApplyActionResponse | undefined;
    call.on("data", (m: ApplyActionProgress) => {
      if (m.event?.$case === "running") onRunning?.(m.event.running);
      else if (m.event?.$case === "outcome") outcome = m.event.outcome;
    });
    call.on("error", reject);
    call.on("end", () =>
      outcome ? resolve(outcome) : reject(new Error("ApplyAction ended without an outcome")),
    );
  });
}
