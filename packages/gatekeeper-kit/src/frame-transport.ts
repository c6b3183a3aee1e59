/**
 * A capnweb `RpcTransport` over any carrier of string frames (a gRPC stream, stdio, an isolate
 * bridge). Incoming frames are `push`ed in (queued until capnweb reads them); outgoing frames go
 * to `onSend`. `close()` ends the incoming side: pending and later `receive()`s reject, which
 * capnweb treats as disconnect (a clean shutdown when no calls are outstanding).
 *
 * Usage (either side):
 * ```ts
 * const t = new FrameTransport({ onSend: (f) => stream.write({ frame: f }), onAbort: () => stream.end() });
 * stream.on("data", (m) => t.push(m.frame));
 * stream.on("end", () => t.close());
 * const session = new RpcSession<Api>(t, localMain);
 * ```
 */
import type { RpcTransport } from "capnweb";

/** Options of a FrameTransport. */
export interface FrameTransportOptions {
  /** Called with each outgoing frame (a capnweb message string). */
  onSend: (frame: string) => void;
  /** Called once when capnweb aborts the session (after its last frame was sent). */
  onAbort?: (reason: unknown) => void;
}

export class FrameTransport implements RpcTransport {
  readonly #onSend: (frame: string) => void;
  readonly #onAbort: ((reason: unknown) => void) | undefined;
  readonly #queue: string[] = [];
  #waiter: { resolve: (f: string) => void; reject: (e: Error) => void } | null = null;
  #closed: Error | null = null;
  #aborted = false;

  constructor(opts: FrameTransportOptions) {
    this.#onSend = opts.onSend;
    this.#onAbort = opts.onAbort;
  }

  /** Delivers one incoming frame. Ignored after `close()`. */
  push(frame: string): void {
    if (this.#closed) return;
    if (this.#waiter) {
      const w = this.#waiter;
      this.#waiter = null;
      w.resolve(frame);
    } else {
      this.#queue.push(frame);
    }
  }

  /** Ends the incoming side; `receive()` rejects with `reason` once queued frames are drained. */
  close(reason: Error = new Error("the peer closed the session")): void {
    if (this.#closed) return;
    this.#closed = reason;
    if (this.#waiter && this.#queue.length === 0) {
      const w = this.#waiter;
      this.#waiter = null;
      w.reject(reason);
    }
  }

  /** True after `close()` or `abort()`. */
  get closed(): boolean {
    return this.#closed !== null || this.#aborted;
  }

  send(message: string): void {
    if (this.#aborted) return;
    this.#onSend(message);
  }

  receive(): Promise<string> {
    const next = this.#queue.shift();
    if (next !== undefined) return Promise.resolve(next);
    if (this.#closed) return Promise.reject(this.#closed);
    return new Promise((resolve, reject) => {
      this.#waiter = { resolve, reject };
    });
  }

  abort(reason: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.close(reason instanceof Error ? reason : new Error("session aborted"));
    this.#onAbort?.(reason);
  }
}
