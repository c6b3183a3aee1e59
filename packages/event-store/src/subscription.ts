import { AsyncLocalStorage } from "node:async_hooks";
import { type StoredEvent, StoreUnavailable, type SubscribeOptions, type Subscription } from "./port.ts";

/** Reads up to `limit` stored events strictly after `cursor`, in order. A StoreUnavailable rejection is retried (every second) until the store answers. */
export type FetchAfter = (cursor: number, limit: number) => StoredEvent[] | Promise<StoredEvent[]>;

/** Events fetched per read while catching up. */
const PAGE = 256;

/** Wait before reading again after the store was unavailable, ms. */
const RETRY_MS = 1000;

/** The subscription whose handler is running in the current async context (so close() from inside it does not wait on itself). */
const insideHandler = new AsyncLocalStorage<PumpedSubscription>();

/**
 * A catch-up-then-live subscription driven by a pump: it reads the store after its cursor, delivers each
 * event to `onEvent` one at a time (awaiting it), advances the cursor, and when nothing is left waits
 * for {@link PumpedSubscription.wake} (called on in-process appends and by the store's poller).
 * Because every delivery comes from a read after the cursor, events are delivered exactly once, in order,
 * with no gap between catch-up and live.
 *
 * A handler that throws (or rejects) stops the subscription; the error goes to `onError`, or is emitted
 * as a process warning when there is no `onError`.
 */
export class PumpedSubscription implements Subscription {
  private closed = false;
  private dirty = true;
  private waiter: (() => void) | undefined;
  private readonly done: Promise<void>;

  /**
   * @param cursor revision (stream) or global position (all) after which delivery starts.
   * @param fetch reads events after a cursor; `cursorOf` extracts the cursor value of an event.
   * @param onClosed called once when the subscription ends (to unregister it from the store).
   */
  constructor(
    private cursor: number,
    private readonly fetch: FetchAfter,
    private readonly cursorOf: (event: StoredEvent) => number,
    private readonly options: SubscribeOptions,
    private readonly onClosed: (sub: PumpedSubscription) => void,
  ) {
    this.done = this.pump();
  }

  /** Signals that new events may exist; cheap and idempotent. */
  wake(): void {
    this.dirty = true;
    const resolve = this.waiter;
    this.waiter = undefined;
    resolve?.();
  }

  /** Stops delivery; resolves once no handler call is in flight (immediately when called from the handler). */
  async close(): Promise<void> {
    this.closed = true;
    this.wake();
    if (insideHandler.getStore() === this) return;
    await this.done;
  }

  private async pump(): Promise<void> {
    // Start on a later tick so the caller holds the Subscription before the first delivery.
    await new Promise<void>((resolve) => setImmediate(resolve));
    try {
      while (!this.closed) {
        this.dirty = false;
        let batch: StoredEvent[];
        try {
          batch = await this.fetch(this.cursor, PAGE);
        } catch (error) {
          // The server went away: keep the cursor and read again once it is back (the table is the truth).
          if (!(error instanceof StoreUnavailable) || this.closed) throw error;
          await new Promise<void>((resolve) => {
            const timer = setTimeout(resolve, RETRY_MS);
            this.waiter = () => {
              clearTimeout(timer);
              resolve();
            };
          });
          continue;
        }
        for (const event of batch) {
          if (this.closed) return;
          await insideHandler.run(this, () => this.options.onEvent(event));
          this.cursor = this.cursorOf(event);
        }
        if (batch.length > 0) {
          // Yield to timers and I/O between pages so a long catch-up with synchronous handlers cannot starve them.
          await new Promise<void>((resolve) => setImmediate(resolve));
        } else if (!this.dirty && !this.closed) {
          await new Promise<void>((resolve) => {
            this.waiter = resolve;
          });
        }
      }
    } catch (error) {
      this.closed = true;
      const err = error instanceof Error ? error : new Error(String(error));
      try {
        if (this.options.onError) this.options.onError(err);
        else process.emitWarning(err, { code: "GATEHOUSE_SUBSCRIPTION_STOPPED" });
      } catch (reportError) {
        process.emitWarning(reportError as Error, { code: "GATEHOUSE_SUBSCRIPTION_ONERROR_THREW" });
      }
    } finally {
      this.onClosed(this);
    }
  }
}
