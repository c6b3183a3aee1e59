import type { FrameCaps } from "./protocol.ts";

/** Why the guard refused a frame: the error the execution ends with. */
export interface FrameRefusal {
  name: "MessageSizeError" | "CallLimitError";
  message: string;
}

/**
 * True when a capnweb message is a call: a "push" (method call, property get, pipelined call) or a
 * "stream" message. The frame is parsed, not prefix-matched, so whitespace or escapes cannot hide a
 * call; a frame that is not a JSON array counts as a call (fail closed).
 */
export function isCall(frame: string): boolean {
  try {
    const message: unknown = JSON.parse(frame);
    if (!Array.isArray(message)) return true;
    return message[0] === "push" || message[0] === "stream";
  } catch {
    return true;
  }
}

/**
 * Counts the snippet's outbound capnweb frames against the caps of one execution.
 * `check(frame)` returns null when the frame may go out, else the refusal (and the frame must not go out).
 */
export class FrameGuard {
  /** Calls seen so far (including a refused one). */
  calls = 0;

  constructor(private readonly caps: FrameCaps) {}

  /** Checks one outbound frame. */
  check(frame: string): FrameRefusal | null {
    const bytes = Buffer.byteLength(frame, "utf8");
    if (bytes > this.caps.maxFrameBytes) {
      return {
        name: "MessageSizeError",
        message: `a binding call sent a capnweb message of ${bytes} bytes, above the cap of ${this.caps.maxFrameBytes} bytes (SANDBOX_MAX_FRAME_BYTES); send less data per call`,
      };
    }
    if (isCall(frame) && ++this.calls > this.caps.maxCalls) {
      return {
        name: "CallLimitError",
        message: `the snippet made more than ${this.caps.maxCalls} binding calls in one execution (SANDBOX_MAX_CALLS); do fewer calls per execution`,
      };
    }
    return null;
  }
}
