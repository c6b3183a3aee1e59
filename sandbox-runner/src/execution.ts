import type { ExecuteResult, ExecutionError } from "@gatehouse/proto";
import type { Logger } from "pino";
import { SandboxUnavailableError } from "./errors.ts";
import type { IsolateHostProcess, Launcher } from "./launcher.ts";
import type { KillReason } from "./metrics.ts";
import { OutputBuffer } from "./output.ts";
import { encodeLine, type FromIsolateHost, type HostResult, LineSplitter } from "./protocol.ts";
import type { ValidStart } from "./validate.ts";

/** Largest return value accepted, bytes of JSON. */
export const MAX_RETURN_JSON_BYTES = 1024 * 1024;
/** Extra time the isolate host gets, beyond the wall-time limit, to start and report before it is killed. */
export const STARTUP_GRACE_MS = { gvisor: 15_000, none: 5_000 } as const;
const MAX_LINE_BYTES = 64 * 1024 * 1024;

/** Outcome of one execution: the proto result plus why it was killed, if it was. */
export interface ExecutionOutcome {
  result: ExecuteResult;
  killReason: KillReason | null;
}

/**
 * Host-side half of one execution: starts an isolate host, relays capnweb frames between it and the
 * caller (`onFrame` out, `deliver` in), collects console output under the cap and builds the ExecuteResult.
 * Frames naming a binding that was not granted are dropped in both directions.
 */
export class Execution {
  private process: IsolateHostProcess | null = null;
  private pending: string[] = [];
  private cancelled = false;
  private teardown: Promise<void> = Promise.resolve();
  private readonly output: OutputBuffer;
  private readonly granted: Set<string>;

  constructor(
    private readonly start: ValidStart,
    private readonly launcher: Launcher,
    private readonly logger: Logger,
    private readonly onFrame: (binding: string, data: string) => void,
  ) {
    this.output = new OutputBuffer(start.limits.outputBytes);
    this.granted = new Set(start.bindings.map((b) => b.name));
  }

  /** Passes one inbound capnweb frame to the isolate (queued until the isolate host is up). */
  deliver(binding: string, data: string): void {
    if (!this.granted.has(binding)) {
      this.logger.warn(
        { event: "frame_dropped", binding_granted: false },
        "dropped a frame for a binding that was not granted",
      );
      return;
    }
    const line = encodeLine({ frame: { binding, data } });
    if (this.process) this.process.child.stdin.write(line);
    else this.pending.push(line);
  }

  /** Stops the execution because the caller went away; run() then resolves with a "CancelledError". */
  cancel(): void {
    this.cancelled = true;
    void this.process?.destroy();
  }

  /**
   * Runs to completion. Resolves with the result (limits and crashes become result errors).
   * @throws SandboxUnavailableError when the isolate host cannot be started at all.
   */
  async run(): Promise<ExecutionOutcome> {
    const began = performance.now();
    let proc: IsolateHostProcess;
    try {
      proc = await this.launcher.launch();
    } catch (error) {
      throw new SandboxUnavailableError(`could not start the isolate host: ${(error as Error).message}`);
    }
    this.process = proc;
    if (this.cancelled) void proc.destroy();
    try {
      return await this.drive(proc, began);
    } finally {
      // Not awaited: the result goes out first; teardown (runsc delete) happens behind it.
      this.teardown = proc.destroy();
    }
  }

  /** Resolves once the isolate host (and its container) is gone; call after run() settles. */
  finished(): Promise<void> {
    return this.teardown;
  }

  private drive(proc: IsolateHostProcess, began: number): Promise<ExecutionOutcome> {
    const { child } = proc;
    const { limits } = this.start;
    return new Promise<ExecutionOutcome>((resolve, reject) => {
      let settled = false;
      let backstopFired = false;
      let stderrTail = "";
      const settle = (
        hostResult: HostResult | null,
        killReason: KillReason | null,
        error?: ExecutionError,
      ) => {
        if (settled) return;
        settled = true;
        clearTimeout(backstop);
        resolve({ result: this.buildResult(hostResult, began, error), killReason });
      };
      const backstop = setTimeout(() => {
        backstopFired = true;
        void proc.destroy();
      }, limits.wallTimeMs + STARTUP_GRACE_MS[this.launcher.mode]);

      child.on("error", (error) => {
        if (settled) return;
        settled = true;
        clearTimeout(backstop);
        reject(new SandboxUnavailableError(`could not start the isolate host: ${error.message}`));
      });
      child.stdin.on("error", () => undefined); // EPIPE after the process died; "exit" reports it
      child.stderr.setEncoding("utf8");
      child.stderr.on("data", (chunk: string) => {
        stderrTail = (stderrTail + chunk).slice(-2048);
      });
      const splitter = new LineSplitter(
        (line) => this.onLine(line, settle),
        MAX_LINE_BYTES,
        () => {
          void proc.destroy();
          settle(
            null,
            "crash",
            errorOf("SandboxCrashError", "the isolate host sent an oversized message and was stopped"),
          );
        },
      );
      child.stdout.setEncoding("utf8");
      child.stdout.on("data", (chunk: string) => splitter.push(chunk));
      child.on("close", (code, signal) => {
        if (settled) return;
        if (this.cancelled) {
          settle(null, "cancelled", errorOf("CancelledError", "the caller cancelled the execution"));
        } else if (backstopFired) {
          settle(
            null,
            "timeout",
            errorOf(
              "TimeoutError",
              `the snippet ran longer than the wall-time limit of ${limits.wallTimeMs} ms (limits.wall_time_ms) and its sandbox was killed`,
            ),
          );
        } else {
          this.logger.error(
            { event: "isolate_host_crashed", code, signal, stderr: stderrTail },
            "isolate host exited without a result",
          );
          settle(
            null,
            "crash",
            errorOf(
              "SandboxCrashError",
              `the sandbox exited (code ${code}, signal ${signal}) before reporting a result`,
            ),
          );
        }
      });

      child.stdin.write(
        encodeLine({ start: { code: this.start.code, bindings: this.start.bindings, limits } }),
      );
      for (const line of this.pending.splice(0)) child.stdin.write(line);
    });
  }

  private onLine(line: string, settle: (r: HostResult | null, k: KillReason | null) => void): void {
    let message: FromIsolateHost;
    try {
      message = JSON.parse(line) as FromIsolateHost;
    } catch {
      this.logger.warn(
        { event: "isolate_host_bad_line" },
        "ignored a line from the isolate host that is not JSON",
      );
      return;
    }
    if ("frame" in message) {
      const { binding, data } = message.frame;
      if (typeof binding === "string" && typeof data === "string" && this.granted.has(binding))
        this.onFrame(binding, data);
    } else if ("console" in message) {
      this.output.add(String(message.console.level), String(message.console.text));
    } else if ("result" in message) {
      const r = message.result;
      const name = r.error?.name;
      settle(r, name === "TimeoutError" ? "timeout" : name === "HeapLimitError" ? "heap" : null);
    }
  }

  private buildResult(host: HostResult | null, began: number, forced?: ExecutionError): ExecuteResult {
    let ok = host?.ok === true && !forced;
    let returnJson = ok ? String(host?.returnJson ?? "") : "";
    let error: ExecutionError | undefined = forced ?? (host?.error ? sanitizeError(host.error) : undefined);
    if (ok && Buffer.byteLength(returnJson, "utf8") > MAX_RETURN_JSON_BYTES) {
      ok = false;
      returnJson = "";
      error = errorOf(
        "ResultTooLargeError",
        `the returned value is larger than ${MAX_RETURN_JSON_BYTES} bytes of JSON; return less data (or a summary)`,
      );
    }
    if (!ok && !error)
      error = errorOf("SandboxCrashError", "the sandbox reported a failure without an error");
    return {
      ok,
      returnJson,
      console: this.output.lines,
      error,
      durationMs: Math.max(0, Math.round(Number(host?.durationMs ?? performance.now() - began))),
      outputTruncated: this.output.truncated || host?.outputTruncated === true,
      warnings: [...this.launcher.warnings],
      executionId: this.start.executionId,
      // The kernel sets the turn id when the execution suspended a turn.
      turnId: "",
    };
  }
}

function errorOf(name: string, message: string): ExecutionError {
  return { name, message, stack: "", line: 0, column: 0 };
}

function sanitizeError(e: HostResult["error"] & object): ExecutionError {
  const num = (v: unknown) => (Number.isInteger(v) && (v as number) >= 0 ? (v as number) : 0);
  return {
    name: String(e.name ?? "Error").slice(0, 200),
    message: String(e.message ?? "").slice(0, 16_384),
    stack: String(e.stack ?? "").slice(0, 16_384),
    line: num(e.line),
    column: num(e.column),
  };
}
