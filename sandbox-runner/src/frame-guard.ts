import type { FrameCaps } from "./protocol.ts";

/** Why the guard refused a frame: the error the execution ends with. */
export interface FrameRefusal {
  name: "MessageSizeError" | "CallLimitError" | "CapabilityError";
  message: string;
}

/**
 * The method a capnweb message calls on a binding's main object (import id 0), or null when it is
 * not such a call. capnweb encodes `env.X.m(args)` as `["push", ["pipeline", 0, ["m"], args]]`
 * (a property path on import 0); calls on later imports (results of granted calls) are the
 * gatekeeper's to police. A path of more than one name on import 0 is returned joined with "."
 * so it never matches a granted method.
 */
export function mainObjectMethod(frame: string): string | null {
  let message: unknown;
  try {
    message = JSON.parse(frame);
  } catch {
    return null;
  }
  if (!Array.isArray(message) || (message[0] !== "push" && message[0] !== "stream")) return null;
  const expr: unknown = message[1];
  if (!Array.isArray(expr) || expr[0] !== "pipeline" || expr[1] !== 0) return null;
  const path: unknown = expr[2];
  if (!Array.isArray(path) || path.length === 0) return null;
  return path.map((p) => String(p)).join(".");
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

  /**
   * @param grants binding name -> its granted methods; when given, a call on a binding's main
   *   object to any other name is refused (the facade in the isolate is the snippet's own realm,
   *   so this check, outside it, is the one that holds).
   */
  constructor(
    private readonly caps: FrameCaps,
    private readonly grants?: ReadonlyMap<string, ReadonlySet<string>>,
  ) {}

  /** Checks one outbound frame of `binding`. */
  check(frame: string, binding?: string): FrameRefusal | null {
    const bytes = Buffer.byteLength(frame, "utf8");
    if (bytes > this.caps.maxFrameBytes) {
      return {
        name: "MessageSizeError",
        message: `a binding call sent a capnweb message of ${bytes} bytes, above the cap of ${this.caps.maxFrameBytes} bytes (SANDBOX_MAX_FRAME_BYTES); send less data per call`,
      };
    }
    // Frames tagged with a binding that was not granted are dropped by the runner (never relayed).
    const granted = binding !== undefined ? this.grants?.get(binding) : undefined;
    if (granted) {
      const method = mainObjectMethod(frame);
      if (method !== null && !granted.has(method)) {
        return {
          name: "CapabilityError",
          message: `the snippet sent a call to "${method.slice(0, 100)}" on binding ${binding}, which is not one of its granted methods (${[...granted].join(", ")}); the call was not sent`,
        };
      }
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
