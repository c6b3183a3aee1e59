/**
 * JSON-lines protocol between the runner (host process) and one isolate host process.
 * One JSON object per line on the isolate host's stdin (runner -> isolate host) and stdout
 * (isolate host -> runner). Nothing else is ever written to the isolate host's stdout.
 */

/** Effective limits, all filled in (see limits.ts for defaults and bounds). */
export interface EffectiveLimits {
  /** Wall-clock limit for compile + run, milliseconds. */
  wallTimeMs: number;
  /** Isolate heap limit, MiB. */
  heapMb: number;
  /** Console output cap, UTF-8 bytes of line texts. */
  outputBytes: number;
}

/** One granted binding: `env[name]` exposes exactly `methods`, each forwarding to the binding's capnweb stub. */
export interface GrantedMethods {
  name: string;
  methods: string[];
}

/** First line sent to the isolate host. `bindings` are the granted bindings, already validated. */
export interface HostStart {
  code: string;
  bindings: GrantedMethods[];
  limits: EffectiveLimits;
}

/** The error shape reported for a failed execution; line/column are 1-based in the snippet, 0 = unknown. */
export interface WireError {
  name: string;
  message: string;
  stack: string;
  line: number;
  column: number;
}

/** The last line an isolate host writes. `durationMs` covers transpile + compile + run. */
export interface HostResult {
  ok: boolean;
  returnJson: string;
  error: WireError | null;
  durationMs: number;
  outputTruncated: boolean;
}

/** Lines the runner writes to the isolate host. */
export type ToIsolateHost = { start: HostStart } | { frame: { binding: string; data: string } };

/** Lines the isolate host writes to the runner. */
export type FromIsolateHost =
  | { frame: { binding: string; data: string } }
  | { console: { level: string; text: string } }
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
    this.pending += chunk;
    let index = this.pending.indexOf("\n");
    while (index >= 0) {
      const line = this.pending.slice(0, index);
      this.pending = this.pending.slice(index + 1);
      if (line.length > 0) this.onLine(line);
      if (this.dead) return;
      index = this.pending.indexOf("\n");
    }
    if (this.pending.length > this.maxLineBytes) {
      this.dead = true;
      this.pending = "";
      this.onOverflow();
    }
  }
}
