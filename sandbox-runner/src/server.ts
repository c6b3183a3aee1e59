import type { ExecuteClientMessage, ExecuteServerMessage, SandboxRunnerServer } from "@gatehouse/proto";
import type { ServerDuplexStream } from "@grpc/grpc-js";
import { status } from "@grpc/grpc-js";
import type { Logger } from "pino";
import { InvalidArgumentError, SandboxRunnerError, toGrpcStatus } from "./errors.ts";
import { Execution, type ExecutionOutcome, type ExecutionSettings } from "./execution.ts";
import type { RunnerMetrics } from "./metrics.ts";
import { type SandboxPool, TaskAbortedError } from "./pool/pool.ts";
import { validateStart } from "./validate.ts";

/** Options of the SandboxRunner gRPC handlers. */
export interface SandboxRunnerHandlerOptions {
  pool: SandboxPool;
  /** Layer label for metrics: "gvisor" or "none". */
  isolation: "gvisor" | "none";
  settings: ExecutionSettings;
  logger: Logger;
  metrics: RunnerMetrics;
  /** Executions allowed at once (queued or running); more get RESOURCE_EXHAUSTED. */
  maxConcurrent: number;
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
  let active = 0;
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
      let finished = false;
      call.on("data", (message: ExecuteClientMessage) => {
        if (finished) return;
        const msg = message.msg;
        if (execution) {
          if (msg?.$case === "frame") execution.deliver(msg.frame.binding, msg.frame.data);
          else if (msg?.$case === "start") {
            finished = true;
            execution.cancel();
            fail(
              call,
              new InvalidArgumentError("start was sent twice; open a new Execute stream per execution"),
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
        if (active >= options.maxConcurrent) {
          finished = true;
          call.emit("error", {
            code: status.RESOURCE_EXHAUSTED,
            details: `the runner is at its limit of ${options.maxConcurrent} concurrent executions; retry later`,
          });
          return;
        }
        let start: ReturnType<typeof validateStart>;
        try {
          start = validateStart(msg.start);
        } catch (error) {
          finished = true;
          fail(call, error);
          return;
        }
        const began = performance.now();
        const log = logger.child({ executionId: start.executionId, workspaceId: start.workspaceId });
        log.info(
          { event: "execution_started", bindings: start.bindings.map((b) => b.name), limits: start.limits },
          "execution started",
        );
        const current = new Execution(start, options.settings, log, (binding, data) => {
          if (!finished) call.write({ msg: { $case: "frame", frame: { binding, data } } });
        });
        execution = current;
        active++;
        metrics.active.inc();
        const done = pool
          .run(start.workspaceId, (sandbox) => current.run(sandbox), current.abortController.signal)
          .catch((error: unknown): ExecutionOutcome => {
            if (error instanceof TaskAbortedError) return current.cancelledOutcome();
            throw error;
          })
          .then(({ result, killReason }) => {
            if (killReason) metrics.kills.inc({ reason: killReason });
            metrics.executionSeconds.observe(
              { outcome: result.ok ? "ok" : "error", sandbox: options.isolation },
              (performance.now() - began) / 1000,
            );
            log.info(
              {
                event: "execution_finished",
                ok: result.ok,
                error: result.error?.name,
                killReason,
                durationMs: result.durationMs,
              },
              "execution finished",
            );
            if (finished) return;
            finished = true;
            call.write({ msg: { $case: "result", result } });
            call.end();
          })
          .catch((error: unknown) => {
            if (finished) return;
            finished = true;
            fail(call, error);
          })
          .finally(() => {
            active--;
            metrics.active.dec();
            inFlight.delete(done);
          });
        inFlight.add(done);
      });
      call.on("cancelled", () => {
        finished = true;
        execution?.cancel();
      });
      call.on("error", () => execution?.cancel());
    },
  };
  return {
    handlers,
    async drain() {
      await Promise.allSettled([...inFlight]);
    },
  };
}
