import capnwebSource from "virtual:capnweb-iife";
import ivm from "isolated-vm";
import type { HostResult, HostStart, WireError } from "../protocol.ts";
import { snippetPosition } from "./locate.ts";
import { GLOBALS_SOURCE, SETUP_SOURCE } from "./prelude.ts";
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
 * Runs one snippet in a fresh isolate (memoryLimit = limits.heapMb) and resolves to its result; never
 * rejects. The wall-time limit covers transpile, compile and run: when it passes the isolate is disposed
 * and the result carries a "TimeoutError". Exceeding the heap gives "HeapLimitError".
 */
export async function executeSnippet(start: HostStart, io: ExecutionIo): Promise<HostResult> {
  const began = performance.now();
  const { limits } = start;
  const isolate = new ivm.Isolate({ memoryLimit: limits.heapMb });
  let timedOut = false;
  const timer = setTimeout(() => {
    timedOut = true;
    if (!isolate.isDisposed) isolate.dispose();
  }, limits.wallTimeMs);
  const finish = (ok: boolean, returnJson: string, error: WireError | null): HostResult => ({
    ok,
    returnJson,
    error,
    durationMs: Math.round(performance.now() - began),
    outputTruncated: false,
  });
  try {
    const js = stripTypes(start.code);
    const context = await isolate.createContext();
    await context.eval(GLOBALS_SOURCE, { filename: "gatehouse-globals.js" });
    // Wrapped in a function so the IIFE's `var capnweb` stays local (the snippet never sees it).
    const capnweb: ivm.Reference = await context.eval(`(function(){${capnwebSource}\nreturn capnweb;})()`, {
      filename: "capnweb.js",
      reference: true,
    });
    const setup: ivm.Reference = await context.eval(SETUP_SOURCE, {
      filename: "gatehouse-prelude.js",
      reference: true,
    });
    const sendRef = new ivm.Reference((binding: string, data: string) => {
      if (typeof binding === "string" && typeof data === "string") io.sendFrame(binding, data);
    });
    const logRef = new ivm.Reference((level: string, text: string) => {
      io.console(String(level), String(text));
    });
    const hooks: ivm.Reference = await setup.apply(
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
    const deliverRef: ivm.Reference = await hooks.get("deliver", { reference: true });
    const runRef: ivm.Reference = await hooks.get("run", { reference: true });
    io.onFrame((binding, data) => {
      if (!isolate.isDisposed) deliverRef.applyIgnored(undefined, [binding, data]);
    });

    const module = await isolate.compileModule(js, { filename: SNIPPET_FILENAME });
    const imports = module.dependencySpecifiers;
    if (imports.length > 0) {
      const line = lineOfImport(start.code, imports[0]!);
      return finish(
        false,
        "",
        wireError(
          "ImportError",
          `imports are not available in the sandbox (found "${imports[0]}"); use only the bindings on env`,
          "",
          line,
          line > 0 ? 1 : 0,
        ),
      );
    }
    await module.instantiate(context, () => {
      throw new Error("imports are not available in the sandbox");
    });
    await module.evaluate();
    const outcomeJson = (await runRef.apply(undefined, [module.namespace.derefInto()], {
      result: { promise: true, copy: true },
    })) as string;
    return finish(...parseOutcome(outcomeJson, limits));
  } catch (error) {
    return finish(false, "", classify(error, timedOut, isolate, start));
  } finally {
    clearTimeout(timer);
    if (!isolate.isDisposed) isolate.dispose();
  }
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
    if (o.ok === true && typeof o.returnJson === "string") return [true, o.returnJson, null];
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

function classify(error: unknown, timedOut: boolean, isolate: ivm.Isolate, start: HostStart): WireError {
  if (timedOut) {
    return wireError(
      "TimeoutError",
      `the snippet ran longer than the wall-time limit of ${start.limits.wallTimeMs} ms (limits.wall_time_ms); do less per execution or raise the limit`,
    );
  }
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
