import ivm from "isolated-vm";
import { loadCapnweb } from "./capnweb-script.ts";
import { GLOBALS_SOURCE, SETUP_SOURCE } from "./prelude.ts";

/**
 * A fresh isolate with its context already holding the harness (globals, capnweb, the setup function)
 * and nothing else: no snippet has ever run in it. Used by exactly one execution, then disposed.
 */
export interface PreparedIsolate {
  isolate: ivm.Isolate;
  context: ivm.Context;
  /** The capnweb namespace inside the context. */
  capnweb: ivm.Reference;
  /** The prelude's setup function (see prelude.ts). */
  setup: ivm.Reference;
  /** memoryLimit the isolate was created with, MiB. */
  heapMb: number;
}

/**
 * Creates a PreparedIsolate with memoryLimit `heapMb`, synchronously (only trusted harness code runs,
 * and avoiding isolated-vm's thread hops matters under gVisor).
 * @throws the isolated-vm error when the isolate cannot be created or the harness fails to load.
 */
export function prepareIsolate(heapMb: number): PreparedIsolate {
  const isolate = new ivm.Isolate({ memoryLimit: heapMb });
  try {
    const context = isolate.createContextSync();
    context.evalSync(GLOBALS_SOURCE, { filename: "gatehouse-globals.js" });
    const capnweb = loadCapnweb(isolate, context);
    const setup: ivm.Reference = context.evalSync(SETUP_SOURCE, {
      filename: "gatehouse-prelude.js",
      reference: true,
    });
    return { isolate, context, capnweb, setup, heapMb };
  } catch (error) {
    if (!isolate.isDisposed) isolate.dispose();
    throw error;
  }
}

/**
 * Keeps one PreparedIsolate ready for the next execution, so creating the isolate and loading the
 * harness happen while the sandbox is idle instead of on the execution's critical path. The reserved
 * isolate is handed out once (take) and never reused; a reserve whose heap size does not match the
 * request is disposed and a fresh isolate is made on the spot.
 */
export class IsolateReserve {
  private next: PreparedIsolate | null = null;
  private scheduled: NodeJS.Immediate | null = null;

  /**
   * Returns a never-used prepared isolate with memoryLimit `heapMb` (the reserved one when it matches).
   * @throws the isolated-vm error when a new isolate cannot be created.
   */
  take(heapMb: number): PreparedIsolate {
    if (this.scheduled) clearImmediate(this.scheduled);
    this.scheduled = null;
    const next = this.next;
    this.next = null;
    if (next && next.heapMb === heapMb && !next.isolate.isDisposed) return next;
    if (next && !next.isolate.isDisposed) next.isolate.dispose();
    return prepareIsolate(heapMb);
  }

  /**
   * Prepares the next isolate (memoryLimit `heapMb`, the size the last execution asked for) on the next
   * turn of the event loop, so pending output goes out first. A failure leaves the reserve empty
   * (take() then prepares on demand).
   */
  refill(heapMb: number): void {
    if (this.next || this.scheduled) return;
    this.scheduled = setImmediate(() => {
      this.scheduled = null;
      try {
        this.next = prepareIsolate(heapMb);
      } catch {
        this.next = null;
      }
    });
  }
}
