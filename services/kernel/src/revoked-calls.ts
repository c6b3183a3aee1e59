/**
 * The Cap'n Web bookkeeping the membrane needs to refuse calls on a binding taken back while an
 * execution runs (Kernel.RemoveBinding). The kernel relays frames without decoding them; for each
 * binding it only counts the sandbox's imports (`push`, `stream`, `pipe` each allocate the next id,
 * counting from 1, the main object being 0) and tracks which of them are awaited and unanswered, so
 * that once the binding is revoked it can answer each awaited call itself with
 * `["reject", id, ["error", "Error", message]]` — a rejected promise in the snippet — instead of
 * letting the call reach the gatekeeper or hang.
 */

/** Messages by which the sandbox allocates an import on the session. */
const ALLOCATES = new Set(["push", "stream", "pipe"]);

function parse(frame: string): unknown[] | undefined {
  try {
    const m: unknown = JSON.parse(frame);
    return Array.isArray(m) ? m : undefined;
  } catch {
    return undefined;
  }
}

/** The error frame answering import `id`. */
function rejectFrame(id: number, message: string): string {
  return JSON.stringify(["reject", id, ["error", "Error", message]]);
}

/** One binding's import ids as the sandbox sees them, and the awaited ones not yet answered. */
export class SessionImports {
  private nextImport = 1;
  /** Imports the sandbox awaits (pulled, or streamed) that the gatekeeper has not answered. */
  private readonly awaited = new Set<number>();

  /** Notes a frame going from the sandbox to the gatekeeper. */
  outbound(frame: string): void {
    const m = parse(frame);
    if (!m) return;
    if (ALLOCATES.has(m[0] as string)) {
      const id = this.nextImport++;
      if (m[0] === "stream") this.awaited.add(id); // a stream call is awaited without a pull
    } else if (m[0] === "pull" && typeof m[1] === "number") this.awaited.add(m[1]);
  }

  /** Notes a frame coming from the gatekeeper: a resolve/reject answers an awaited import. */
  inbound(frame: string): void {
    const m = parse(frame);
    if (m && (m[0] === "resolve" || m[0] === "reject") && typeof m[1] === "number") this.awaited.delete(m[1]);
  }

  /**
   * After revocation: notes `frame` (which is not forwarded) and returns the frames to send back to
   * the sandbox — a rejection for the call it awaits, if it is a pull or a stream call.
   */
  refuse(frame: string, message: string): string[] {
    this.outbound(frame);
    return this.drain(message);
  }

  /** Rejections for every awaited, unanswered import (emptied as they are returned). */
  drain(message: string): string[] {
    const out = [...this.awaited].sort((x, y) => x - y).map((id) => rejectFrame(id, message));
    this.awaited.clear();
    return out;
  }
}
