/**
 * JSON-lines protocol between the runner (host process) and one isolate host process (a sandbox).
 * One JSON object per line on the isolate host's stdin (runner -> isolate host) and stdout
 * (isolate host -> runner). Nothing else is ever written to the isolate host's stdout.
 *
 * An isolate host lives for many executions, one at a time: it writes `{ready}` once warmed up (and
 * again for each `{hello}`, for a channel attached later), then for each
 * `{start}` (carrying a sequence number `seq`) it runs the snippet in a fresh isolate and writes one
 * `{result}` with the same `seq`. Frames and console lines carry the `seq` of their execution, so a
 * late frame of an earlier execution is dropped instead of reaching the next one.
 */

/** Largest return value accepted, bytes of JSON (checked by the isolate host and again by the runner). */
export const MAX_RETURN_JSON_BYTES = 1024 * 1024;

/** Effective limits, all filled in (see limits.ts for defaults and bounds). */
export interface EffectiveLimits {
  /** Wall-clock limit for compile + run, milliseconds. */
  wallTimeMs: number;
  /** Isolate heap limit, MiB. */
  heapMb: number;
  /** Console output cap, UTF-8 bytes of line texts. */
  outputBytes: number;
}

/** Runner-wide caps on the capnweb traffic of one execution (runner configuration, not per request). */
export interface FrameCaps {
  /** Largest capnweb message (frame) in either direction, UTF-8 bytes. */
  maxFrameBytes: number;
  /** Most binding calls (capnweb "push"/"stream" messages from the snippet) one execution may make. */
  maxCalls: number;
}

/** One granted binding: `env[name]` exposes exactly `methods`, each forwarding to the binding's capnweb stub. */
export interface GrantedMethods {
  name: string;
  methods: string[];
}

/** Starts one execution. `bindings` are the granted bindings, already validated. */
export interface HostStart {
  /** Execution sequence number within this sandbox (1, 2, ...); echoed on every message of the execution. */
  seq: number;
  code: string;
  bindings: GrantedMethods[];
  limits: EffectiveLimits;
  caps: FrameCaps;
}

/** The error shape reported for a failed execution; line/column are 1-based in the snippet, 0 = unknown. */
export interface WireError {
  name: string;
  message: string;
  stack: string;
  line: number;
  column: number;
}

/** The last line an isolate host writes for an execution. `durationMs` covers transpile + compile + run. */
export interface HostResult {
  seq: number;
  ok: boolean;
  returnJson: string;
  error: WireError | null;
  durationMs: number;
  outputTruncated: boolean;
  /** Binding calls the snippet made (capnweb push/stream messages sent). */
  calls: number;
}

/** Lines the runner writes to the isolate host. */
export type ToIsolateHost =
  | { start: HostStart }
  | { frame: { seq: number; binding: string; data: string } }
  /** Ends execution `seq` now with this error (caller gone, inbound frame too large, ...). */
  | { abort: { seq: number; name: string; message: string } }
  /**
   * Asks for `{ready}` again (answered once warmed up). For channels attached after the isolate host
   * started, e.g. a Kubernetes pod's attach stream, which does not replay what was written before.
   */
  | { hello: Record<string, never> }
  /** Keeps a quiet channel alive (GATEHOUSE_INPUT_SILENCE_MS); not answered. */
  | { ping: Record<string, never> };

/** Lines the isolate host writes to the runner. */
export type FromIsolateHost =
  /** Written when isolated-vm is loaded and warmed up (the sandbox can take executions), and after each `{hello}`. */
  | { ready: { pid: number } }
  | { frame: { seq: number; binding: string; data: string } }
  | { console: { seq: number; level: string; text: string } }
  | { result: HostResult };

/** Encodes one protocol message as a single line (JSON never contains a raw newline). */
export function encodeLine(message: ToIsolateHost | FromIsolateHost): string {
  return `${JSON.stringify(message)}\n`;
}

/**
 * Splits a byte stream into lines and calls `onLine` for each complete line (without "\n").
 * Lines longer than `maxLineBytes` make `onOverflow` fire once and the rest of the stream is ignored.
 */
export class LineSplitter {
  private pending = "";
  private dead = false;

  constructor(
    private readonly onLine: (line: string) => void,
    private readonly maxLineBytes: number,
    private readonly onOverflow: () => void,
  ) {}

  /** Feeds a chunk (utf-8 text). */
  push(chunk: string): void {
    if (this.dead) return;
    let start = 0;
    let index = chunk.indexOf("\n");
    if (index >= 0) {
      // Most lines arrive whole in one chunk: avoid re-scanning the pending text.
      const first = this.pending + chunk.slice(0, index);
      this.pending = "";
      if (first.length > this.maxLineBytes) {
        this.overflow();
        return;
      }
      if (first.length > 0) this.onLine(first);
      if (this.dead) return;
      start = index + 1;
      index = chunk.indexOf("\n", start);
      while (index >= 0) {
        if (index - start > this.maxLineBytes) {
          this.overflow();
          return;
        }
        if (index > start) this.onLine(chunk.slice(start, index));
        if (this.dead) return;
        start = index + 1;
        index = chunk.indexOf("\n", start);
      }
    }
    this.pending += chunk.slice(start);
    if (this.pending.length > this.maxLineBytes) this.overflow();
  }

  /** Stops delivering lines (the stream is abandoned). */
  stop(): void {
    this.dead = true;
    this.pending = "";
  }

  private overflow(): void {
    this.stop();
    this.onOverflow();
  }
}
