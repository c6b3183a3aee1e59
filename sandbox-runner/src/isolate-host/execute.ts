import ivm from "isolated-vm";
import { FrameGuard } from "../frame-guard.ts";
import { type HostStart, MAX_RETURN_JSON_BYTES, type WireError } from "../protocol.ts";
import { snippetPosition } from "./locate.ts";
import type { IsolateReserve, PreparedIsolate } from "./reserve.ts";
import { SNIPPET_FILENAME, SnippetSyntaxError, stripTypes } from "./transpile.ts";

/** What the execution needs from the process around it. */
export interface ExecutionIo {
  /** Sends one capnweb frame of `binding` towards the runner. */
  sendFrame(binding: string, data: string): void;
  /** Emits one console line (the caller applies the output cap). */
  console(level: string, text: string): void;
  /** Registers the function that receives inbound frames; frames arriving earlier are queued by the caller. */
  onFrame(deliver: (binding: string, data: string) => void): void;
}

/** What a started snippet resolves to (the isolate host adds seq and the output flag). */
export interface SnippetOutcome {
  ok: boolean;
  returnJson: string;
  error: WireError | null;
  /** Transpile + compile + run, milliseconds. */
  durationMs: number;
  /** Binding calls made. */
  calls: number;
}

/** A running execution: its outcome, and a way to end it early with a given error. */
export interface RunningSnippet {
  /** Resolves once the isolate is gone; never rejects. */
  outcome: Promise<SnippetOutcome>;
  /** Disposes the isolate now; the outcome then carries this error (the first abort wins). */
  abort(name: string, message: string): void;
}

const MAX_ERROR_TEXT = 16_384;

function wireError(name: string, message: string, stack = "", line = 0, column = 0): WireError {
  return {
    name: name.slice(0, 200),
    message: message.slice(0, MAX_ERROR_TEXT),
    stack: stack.slice(0, MAX_ERROR_TEXT),
    line,
    column,
  };
}

/**
 * Starts one snippet in a fresh isolate (memoryLimit = limits.heapMb; the reserve's prepared one when it
 * matches) whose context has never run a snippet, so nothing a previous execution left on globals is
 * visible. The wall-time limit covers transpile, compile and run: when it passes the isolate is disposed
 * and the outcome carries a "TimeoutError". Exceeding the heap gives "HeapLimitError"; a frame above
 * `caps.maxFrameBytes` gives "MessageSizeError" and the `caps.maxCalls + 1`-th call gives
 * "CallLimitError" (the offending frame is never sent). In every case only the isolate is disposed;
 * the process stays usable for the next execution.
 */
export function startSnippet(start: HostStart, io: ExecutionIo, reserve: IsolateReserve): RunningSnippet {
  const began = performance.now();
  let isolate: ivm.Isolate | null = null;
  let killed: WireError | null = null;
  const abort = (name: string, message: string) => {
    killed ??= wireError(name, message);
    if (isolate && !isolate.isDisposed) isolate.dispose();
  };
  const timer = setTimeout(
    () =>
      abort(
        "TimeoutError",
        `the snippet ran longer than the wall-time limit of ${start.limits.wallTimeMs} ms (limits.wall_time_ms); do less per execution or raise the limit`,
      ),
    start.limits.wallTimeMs,
  );
  const guard = new FrameGuard(start.caps, new Map(start.bindings.map((b) => [b.name, new Set(b.methods)])));
  const outcome = (async (): Promise<SnippetOutcome> => {
    const finish = (ok: boolean, returnJson: string, error: WireError | null): SnippetOutcome => ({
      ok: ok && !killed,
      returnJson: killed ? "" : returnJson,
      error: killed ?? error,
      durationMs: Math.round(performance.now() - began),
      calls: guard.calls,
    });
    let prepared: PreparedIsolate;
    try {
      prepared = reserve.take(start.limits.heapMb);
    } catch (error) {
      return finish(
        false,
        "",
        wireError("HarnessError", `the isolate could not be created: ${(error as Error).message}`),
      );
    }
    isolate = prepared.isolate;
    try {
      if (killed) return finish(false, "", null);
      const [ok, returnJson, error] = await runIn(prepared, start, io, guard, abort, () => killed);
      return finish(ok, returnJson, error);
    } catch (error) {
      return finish(false, "", classify(error, prepared.isolate, start));
    } finally {
      clearTimeout(timer);
      // Disposed right after the result is written (freeing the heap costs ~1 ms under gVisor); it is
      // never used again either way.
      setImmediate(() => prepared.isolate.isDisposed || prepared.isolate.dispose());
    }
  })();
  return { outcome, abort };
}

async function runIn(
  prepared: PreparedIsolate,
  start: HostStart,
  io: ExecutionIo,
  guard: FrameGuard,
  abort: (name: string, message: string) => void,
  killedBy: () => WireError | null,
): Promise<[boolean, string, WireError | null]> {
  const { isolate, context, capnweb, setup } = prepared;
  const { limits } = start;
  const js = stripTypes(start.code);
  const sendRef = new ivm.Reference((binding: string, data: string) => {
    if (typeof binding !== "string" || typeof data !== "string" || killedBy()) return;
    const refusal = guard.check(data, binding);
    if (refusal) abort(refusal.name, refusal.message);
    else io.sendFrame(binding, data);
  });
  const logRef = new ivm.Reference((level: string, text: string) => {
    io.console(String(level), String(text));
  });
  // Harness steps run synchronously on this thread (no snippet code runs in them, and each async
  // isolated-vm call costs a thread hop, expensive under gVisor); evaluate and run stay asynchronous so
  // the wall-time timer can always fire.
  const hooks: ivm.Reference = setup.applySync(
    undefined,
    [
      capnweb.derefInto(),
      sendRef,
      logRef,
      new ivm.ExternalCopy(start.bindings).copyInto(),
      limits.outputBytes,
    ],
    { result: { reference: true } },
  );
  const deliverRef: ivm.Reference = hooks.getSync("deliver", { reference: true });
  const runRef: ivm.Reference = hooks.getSync("run", { reference: true });
  io.onFrame((binding, data) => {
    if (!isolate.isDisposed) deliverRef.applyIgnored(undefined, [binding, data]);
  });

  const module = isolate.compileModuleSync(js, { filename: SNIPPET_FILENAME });
  const imports = module.dependencySpecifiers;
  if (imports.length > 0) {
    const line = lineOfImport(start.code, imports[0]!);
    return [
      false,
      "",
      wireError(
        "ImportError",
        `imports are not available in the sandbox (found "${imports[0]}"); use only the bindings on env`,
        "",
        line,
        line > 0 ? 1 : 0,
      ),
    ];
  }
  module.instantiateSync(context, () => {
    throw new Error("imports are not available in the sandbox");
  });
  await module.evaluate();
  const outcomeJson = (await runRef.apply(undefined, [module.namespace.derefInto()], {
    result: { promise: true, copy: true },
  })) as string;
  return parseOutcome(outcomeJson, limits);
}

/** Decodes the JSON the in-isolate `run` produced, defensively (the snippet may have tampered with globals). */
function parseOutcome(
  outcomeJson: unknown,
  limits: HostStart["limits"],
): [boolean, string, WireError | null] {
  try {
    const o = JSON.parse(String(outcomeJson)) as {
      ok?: unknown;
      returnJson?: unknown;
      error?: { name?: unknown; message?: unknown; stack?: unknown };
    };
    if (o.ok === true && typeof o.returnJson === "string") {
      if (Buffer.byteLength(o.returnJson, "utf8") <= MAX_RETURN_JSON_BYTES) return [true, o.returnJson, null];
      return [
        false,
        "",
        wireError(
          "ResultTooLargeError",
          `the returned value is larger than ${MAX_RETURN_JSON_BYTES} bytes of JSON; return less data (or a summary)`,
        ),
      ];
    }
    const e = o.error ?? {};
    const stack = typeof e.stack === "string" ? e.stack : "";
    const message = typeof e.message === "string" ? e.message : "";
    const { line, column } = snippetPosition(stack);
    if (e.name === "RangeError" && /Array buffer allocation failed/.test(message)) {
      // isolated-vm's allocator refuses array buffers past memoryLimit: that is the heap limit speaking.
      return [
        false,
        "",
        wireError(
          "HeapLimitError",
          heapMessage(limits, "an array buffer allocation was refused: "),
          stack,
          line,
          column,
        ),
      ];
    }
    return [
      false,
      "",
      wireError(typeof e.name === "string" ? e.name : "Error", message, stack, line, column),
    ];
  } catch {
    return [
      false,
      "",
      wireError("HarnessError", "the snippet's outcome could not be read (were globals replaced?)"),
    ];
  }
}

function classify(error: unknown, isolate: ivm.Isolate, start: HostStart): WireError {
  if (error instanceof SnippetSyntaxError) {
    return wireError("SyntaxError", error.message, "", error.line, error.column);
  }
  const e = error as { name?: string; message?: string; stack?: string };
  const message = String(e?.message ?? error);
  if (/memory limit/i.test(message) || (isolate.isDisposed && /disposed/i.test(message))) {
    return wireError("HeapLimitError", heapMessage(start.limits, ""));
  }
  const { line, column } = snippetPosition(message, e?.stack);
  const cleanMessage = message.replace(/\s*\[snippet\.ts:\d+:\d+\]$/, "");
  return wireError(String(e?.name ?? "Error"), cleanMessage, String(e?.stack ?? ""), line, column);
}

function heapMessage(limits: HostStart["limits"], prefix: string): string {
  return `${prefix}the snippet exceeded the heap limit of ${limits.heapMb} MiB (limits.heap_mb); work on less data at once or raise the limit`;
}

/** 1-based line of the first `import`/`export ... from` mentioning `specifier`, 0 if not found. */
function lineOfImport(code: string, specifier: string): number {
  const lines = code.split("\n");
  const index = lines.findIndex((l) => /\b(import|from)\b/.test(l) && l.includes(specifier));
  return index + 1;
}
