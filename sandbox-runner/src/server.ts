import type {
  ExecuteClientMessage,
  ExecuteResult,
  ExecuteServerMessage,
  SandboxRunnerServer,
} from "@gatehouse/proto";
import type { ServerDuplexStream } from "@grpc/grpc-js";
import { status } from "@grpc/grpc-js";
import type { Logger } from "pino";
import { Admission, AdmissionRefused } from "./admission.ts";
import { InvalidArgumentError, SandboxRunnerError, toGrpcStatus } from "./errors.ts";
import { Execution, type ExecutionOutcome, type ExecutionSettings } from "./execution.ts";
import type { RunnerMetrics } from "./metrics.ts";
import type { SandboxIsolation } from "./pool/backend.ts";
import { type SandboxPool, TaskAbortedError } from "./pool/pool.ts";
import { validateStart } from "./validate.ts";

type ValidStart = ReturnType<typeof validateStart>;

const logFields = (start: ValidStart) => ({ executionId: start.executionId, workspaceId: start.workspaceId });

/** Options of the SandboxRunner gRPC handlers. */
export interface SandboxRunnerHandlerOptions {
  pool: SandboxPool;
  /** Layer label for metrics: "gvisor" or "none". */
  isolation: SandboxIsolation;
  settings: ExecutionSettings;
  logger: Logger;
  metrics: RunnerMetrics;
  /** Executions admitted at once (queued in their workspace's lane or running); more wait for a slot. */
  maxConcurrent: number;
  /** Executions allowed to wait for a slot; more get RESOURCE_EXHAUSTED at once. */
  maxWaiting: number;
  /** Longest wait for a slot, ms; then RESOURCE_EXHAUSTED. */
  admissionWaitMs: number;
}

type Call = ServerDuplexStream<ExecuteClientMessage, ExecuteServerMessage>;

/**
 * gRPC handlers for `gatehouse.v1.SandboxRunner`. Per call: the first message must be `start`; later
 * `frame`s go to the isolate; isolate frames come back as `frame`s; the last server message is `result`,
 * then the stream ends. Request errors end the call with a status (see errors.ts).
 */
export function sandboxRunnerHandlers(options: SandboxRunnerHandlerOptions): {
  handlers: SandboxRunnerServer;
  /** Resolves when every started execution has finished. */
  drain(): Promise<void>;
} {
  const { pool, logger, metrics } = options;
  const admission = new Admission(options.maxConcurrent, options.maxWaiting, options.admissionWaitMs);
  const inFlight = new Set<Promise<unknown>>();

  const fail = (call: Call, error: unknown) => {
    const { code, details } = toGrpcStatus(error);
    if (!(error instanceof SandboxRunnerError))
      logger.error({ event: "execute_failed", err: error }, "execution failed");
    call.emit("error", { code, details });
  };

  const handlers: SandboxRunnerServer = {
    execute(call: Call) {
      let execution: Execution | null = null;
      let admitting = false;
      let finished = false;
      const cancelWait = new AbortController();
      call.on("data", (message: ExecuteClientMessage) => {
        if (finished) return;
        const msg = message.msg;
        if (execution || admitting) {
          if (msg?.$case === "frame" && execution) execution.deliver(msg.frame.binding, msg.frame.data);
          else {
            finished = true;
            execution?.cancel();
            cancelWait.abort();
            fail(
              call,
              new InvalidArgumentError(
                msg?.$case === "start"
                  ? "start was sent twice; open a new Execute stream per execution"
                  : "a frame arrived before the execution started; send frames only in reply to the sandbox's",
              ),
            );
          }
          return;
        }
        if (msg?.$case !== "start") {
          finished = true;
          fail(
            call,
            new InvalidArgumentError(
              "the first message must be `start` (ExecuteStart); send start before frames",
            ),
          );
          return;
        }
        let start: ValidStart;
        try {
          start = validateStart(msg.start);
        } catch (error) {
          finished = true;
          fail(call, error);
          return;
        }
        admitting = true;
        const admitted = admission.acquire(cancelWait.signal);
        metrics.waiting.set(admission.queued);
        const done = admitted.then(
          (release) => {
            metrics.waiting.set(admission.queued);
            if (finished) return release();
            execution = new Execution(
              start,
              options.settings,
              logger.child(logFields(start)),
              (binding, data) => {
                if (!finished) call.write({ msg: { $case: "frame", frame: { binding, data } } });
              },
            );
            return runAdmitted(execution, start)
              .then(
                (result) => {
                  if (finished) return;
                  finished = true;
                  call.write({ msg: { $case: "result", result } });
                  call.end();
                },
                (error: unknown) => {
                  if (finished) return;
                  finished = true;
                  fail(call, error);
                },
              )
              .finally(release);
          },
          (error: unknown) => {
            metrics.waiting.set(admission.queued);
            if (finished) return;
            finished = true;
            if (error instanceof AdmissionRefused) {
              call.emit("error", { code: status.RESOURCE_EXHAUSTED, details: error.message });
            } else fail(call, error);
          },
        );
        inFlight.add(done);
        void done.finally(() => inFlight.delete(done));
      });
      call.on("cancelled", () => {
        finished = true;
        cancelWait.abort();
        execution?.cancel();
      });
      call.on("error", () => {
        cancelWait.abort();
        execution?.cancel();
      });
    },
  };

  /** Runs one admitted execution in its workspace's lane; resolves with its result. */
  const runAdmitted = async (execution: Execution, start: ValidStart): Promise<ExecuteResult> => {
    const began = performance.now();
    const log = logger.child(logFields(start));
    log.info(
      { event: "execution_started", bindings: start.bindings.map((b) => b.name), limits: start.limits },
      "execution started",
    );
    metrics.active.inc();
    try {
      let ranOn: { sandbox: string; instance: string | null } | null = null;
      // "none": the execution ended before it had a sandbox (cancelled, or none could be started).
      let sandboxStart: "warm" | "cold" | "none" = "none";
      const { result, killReason } = await pool
        .run(
          start.workspaceId,
          (sandbox, how) => {
            ranOn = { sandbox: sandbox.id, instance: sandbox.instanceId };
            sandboxStart = how;
            return execution.run(sandbox);
          },
          execution.abortController.signal,
        )
        .catch((error: unknown): ExecutionOutcome => {
          if (error instanceof TaskAbortedError) return execution.cancelledOutcome();
          throw error;
        });
      if (killReason) metrics.kills.inc({ reason: killReason });
      metrics.executionSeconds.observe(
        { outcome: result.ok ? "ok" : "error", sandbox: options.isolation, start: sandboxStart },
        (performance.now() - began) / 1000,
      );
      log.info(
        {
          event: "execution_finished",
          ok: result.ok,
          error: result.error?.name,
          killReason,
          durationMs: result.durationMs,
          // Which sandbox ran it: the pool's id and the backend's (a runsc container id, a pod name).
          ...(ranOn ?? {}),
        },
        "execution finished",
      );
      return result;
    } finally {
      metrics.active.dec();
    }
  };
  return {
    handlers,
    async drain() {
      await Promise.allSettled([...inFlight]);
    },
  };
}
