import type { ExecuteResult, ExecutionError } from "@gatehouse/proto";
import type { Logger } from "pino";
import { FrameGuard } from "./frame-guard.ts";
import type { KillReason } from "./metrics.ts";
import { OutputBuffer } from "./output.ts";
import { describeExit, type Sandbox, type SandboxGone } from "./pool/sandbox.ts";
import { type FrameCaps, type HostResult, MAX_RETURN_JSON_BYTES } from "./protocol.ts";
import type { ValidStart } from "./validate.ts";

export { MAX_RETURN_JSON_BYTES } from "./protocol.ts";

/** Outcome of one execution: the proto result plus why it was stopped, if it was. */
export interface ExecutionOutcome {
  result: ExecuteResult;
  /** Why the execution was stopped or cut (metrics label), null when it ran normally. */
  killReason: KillReason | null;
}

/** Runner-wide settings every execution uses. */
export interface ExecutionSettings {
  caps: FrameCaps;
  /** Notices attached to every result (the gVisor-off warning). */
  warnings: readonly string[];
  /**
   * Time the isolate host gets beyond the wall-time limit (and after an abort) to report, milliseconds;
   * past it the sandbox is killed and replaced.
   */
  graceMs: number;
}

/**
 * Host-side half of one execution: waits in its workspace's queue (frames from the caller are held
 * meanwhile), then runs on the workspace's sandbox, relaying capnweb frames between it and the caller
 * (`onFrame` out, `deliver` in), collecting console output under the cap and building the ExecuteResult.
 * Frames naming a binding that was not granted are dropped in both directions; frames above the size
 * cap end the execution with a MessageSizeError.
 */
export class Execution {
  /** Aborted when the caller goes away (the pool then skips the execution if it has not begun). */
  readonly abortController = new AbortController();
  private pending: Array<[string, string]> = [];
  private pendingAbort: { name: string; message: string; reason: KillReason } | null = null;
  /** The running execution: its sandbox, sequence number, and how to re-arm its kill deadline. */
  private attached: { sandbox: Sandbox; seq: number; deadline(ms: number, reason: KillReason): void } | null =
    null;
  private readonly output: OutputBuffer;
  private readonly granted: Set<string>;

  constructor(
    private readonly start: ValidStart,
    private readonly settings: ExecutionSettings,
    private readonly logger: Logger,
    private readonly onFrame: (binding: string, data: string) => void,
  ) {
    this.output = new OutputBuffer(start.limits.outputBytes);
    this.granted = new Set(start.bindings.map((b) => b.name));
  }

  /** Passes one inbound capnweb frame to the isolate (held until the execution begins). */
  deliver(binding: string, data: string): void {
    if (!this.granted.has(binding)) {
      this.logger.warn(
        { event: "frame_dropped", binding_granted: false },
        "dropped a frame for a binding that was not granted",
      );
      return;
    }
    const bytes = Buffer.byteLength(data, "utf8");
    if (bytes > this.settings.caps.maxFrameBytes) {
      this.abort(
        "MessageSizeError",
        `a reply from binding ${binding} was a capnweb message of ${bytes} bytes, above the cap of ${this.settings.caps.maxFrameBytes} bytes (SANDBOX_MAX_FRAME_BYTES); ask for less data per call (e.g. a page)`,
        "message-size",
      );
      return;
    }
    if (this.attached) this.attached.sandbox.sendFrame(this.attached.seq, binding, data);
    else this.pending.push([binding, data]);
  }

  /** Stops the execution because the caller went away; it then ends with a "CancelledError". */
  cancel(): void {
    this.abortController.abort();
    this.abort("CancelledError", "the caller cancelled the execution", "cancelled");
  }

  /** The outcome of an execution cancelled before it began. */
  cancelledOutcome(): ExecutionOutcome {
    return {
      result: this.buildResult(null, 0, errorOf("CancelledError", "the caller cancelled the execution")),
      killReason: "cancelled",
    };
  }

  /**
   * Runs the execution on `sandbox` (ready, idle, belonging to this execution's workspace) and resolves
   * with the result; limits, crashes and kills become result errors. Never rejects.
   */
  run(sandbox: Sandbox): Promise<ExecutionOutcome> {
    const began = performance.now();
    const { limits } = this.start;
    const guard = new FrameGuard(
      this.settings.caps,
      new Map(this.start.bindings.map((b) => [b.name, new Set(b.methods)])),
    );
    return new Promise<ExecutionOutcome>((resolve) => {
      let settled = false;
      let backstop: NodeJS.Timeout | undefined;
      const settle = (host: HostResult | null, killReason: KillReason | null, forced?: ExecutionError) => {
        if (settled) return;
        settled = true;
        clearTimeout(backstop);
        this.attached = null;
        const result = this.buildResult(host, began, forced);
        resolve({ result, killReason: killReason ?? (result.outputTruncated ? "output" : null) });
      };
      let seq: number;
      try {
        seq = sandbox.begin(
          {
            code: this.start.code,
            bindings: this.start.bindings,
            limits,
            caps: this.settings.caps,
          },
          {
            onFrame: (binding, data) => {
              if (!this.granted.has(binding)) return;
              const refusal = guard.check(data, binding);
              if (!refusal) return this.onFrame(binding, data);
              // The isolate host checks the same caps; a frame past them means it is not behaving.
              void sandbox.kill(
                refusal.name === "CallLimitError"
                  ? "calls"
                  : refusal.name === "CapabilityError"
                    ? "capability"
                    : "message-size",
                "the isolate host let a frame past the caps",
              );
            },
            onConsole: (level, text) => {
              this.output.add(level, text);
            },
            onResult: (host) => settle(host, killReasonOf(host)),
            onGone: (gone) =>
              settle(null, gone.kind === "crash" ? "crash" : gone.reason, goneError(gone, limits)),
          },
        );
      } catch {
        // It died between being handed out and this call.
        settle(
          null,
          "crash",
          errorOf("SandboxCrashError", `the sandbox was gone before the execution began; ${NEXT}`),
        );
        return;
      }
      const deadline = (ms: number, reason: KillReason) => {
        clearTimeout(backstop);
        backstop = setTimeout(() => void sandbox.kill(reason, `no result ${ms} ms after the deadline`), ms);
      };
      this.attached = { sandbox, seq, deadline };
      for (const [binding, data] of this.pending.splice(0)) sandbox.sendFrame(seq, binding, data);
      deadline(limits.wallTimeMs + this.settings.graceMs, "timeout");
      const early = this.pendingAbort;
      if (early) this.abort(early.name, early.message, early.reason);
    });
  }

  /**
   * Ends the execution early with this error (the isolate host disposes the isolate and reports it): now
   * if it runs, at its start if it waits. If the host does not report within the grace time, its sandbox
   * is killed for `reason`.
   */
  private abort(name: string, message: string, reason: KillReason): void {
    if (!this.attached) {
      this.pendingAbort ??= { name, message, reason };
      return;
    }
    this.attached.sandbox.abort(this.attached.seq, name, message);
    this.attached.deadline(this.settings.graceMs, reason);
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
    const measured = began > 0 ? performance.now() - began : 0;
    return {
      ok,
      returnJson,
      console: this.output.lines,
      error,
      durationMs: Math.max(0, Math.round(Number(host?.durationMs ?? measured))),
      outputTruncated: this.output.truncated || host?.outputTruncated === true,
      warnings: [...this.settings.warnings],
      executionId: this.start.executionId,
      // The kernel sets the turn id when the execution suspended a turn, and what it recorded.
      turnId: "",
      submitted: [],
      observed: [],
    };
  }
}

const KILL_REASON_BY_ERROR: Record<string, KillReason> = {
  TimeoutError: "timeout",
  HeapLimitError: "heap",
  CallLimitError: "calls",
  MessageSizeError: "message-size",
  CapabilityError: "capability",
  CancelledError: "cancelled",
  ResultTooLargeError: "output",
};

function killReasonOf(host: HostResult): KillReason | null {
  const name = host.error?.name;
  return (name && Object.hasOwn(KILL_REASON_BY_ERROR, name) ? KILL_REASON_BY_ERROR[name] : null) ?? null;
}

const NEXT = "the next execution gets a new sandbox";

function goneError(gone: SandboxGone, limits: ValidStart["limits"]): ExecutionError {
  if (gone.kind === "crash") {
    return errorOf("SandboxCrashError", `the sandbox crashed (${describeExit(gone.exit)}); ${NEXT}`);
  }
  switch (gone.reason) {
    case "timeout":
      return errorOf(
        "TimeoutError",
        `the snippet ran longer than the wall-time limit of ${limits.wallTimeMs} ms (limits.wall_time_ms) and did not stop; its sandbox was killed and ${NEXT}`,
      );
    case "cancelled":
      return errorOf("CancelledError", "the caller cancelled the execution; its sandbox was killed");
    case "calls":
      return errorOf(
        "CallLimitError",
        `the sandbox went past the binding call cap; it was killed and ${NEXT}`,
      );
    default:
      return errorOf(
        "MessageSizeError",
        `the sandbox sent a message above the size cap; it was killed and ${NEXT}`,
      );
  }
}

function errorOf(name: string, message: string): ExecutionError {
  return { name, message, stack: "", line: 0, column: 0 };
}

function sanitizeError(e: NonNullable<HostResult["error"]>): ExecutionError {
  const num = (v: unknown) => (Number.isInteger(v) && (v as number) >= 0 ? (v as number) : 0);
  return {
    name: String(e.name ?? "Error").slice(0, 200),
    message: String(e.message ?? "").slice(0, 16_384),
    stack: String(e.stack ?? "").slice(0, 16_384),
    line: num(e.line),
    column: num(e.column),
  };
}
