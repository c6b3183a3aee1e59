/**
 * The drain of a service that sits behind a load balancer (a Kubernetes Service, an ingress) before it
 * stops. When a pod is replaced, Kubernetes sends SIGTERM while some clients, proxies and kube-proxy
 * rules still route new requests to it for a few seconds. A process that stops listening at once
 * refuses those requests. Draining instead means: report not-ready at once (`/healthz` answers 503),
 * keep serving for the drain period, tell clients to drop their keep-alive connections, and only then
 * stop accepting and finish what is in flight.
 */
import type { Logger } from "pino";

/** Where a {@link Drain} is: serving, draining (not ready, still serving), or stopping (the drain is over). */
export type DrainState = "serving" | "draining" | "stopping";

/** Longest drain accepted, ms (5 minutes): longer is a misconfiguration, not a drain. */
export const MAX_DRAIN_MS = 300_000;

/**
 * The drain period of one process. Typical use in a `main.ts`:
 *
 * ```ts
 * const drain = new Drain(config.drainSeconds * 1000);
 * const ops = await startOpsHttp({ …, healthy: drain.ready });
 * stopOnSignals(logger, () => drain.drain(logger), () => server.close());
 * ```
 */
export class Drain {
  #state: DrainState = "serving";
  #done: Promise<void> | undefined;
  #skip: (() => void) | undefined;

  /**
   * @param drainMs how long the process keeps serving after the drain starts, milliseconds
   *   (0: no drain, it stops at once).
   * @throws RangeError when `drainMs` is not a whole number between 0 and {@link MAX_DRAIN_MS}.
   */
  constructor(readonly drainMs: number) {
    if (!Number.isInteger(drainMs) || drainMs < 0 || drainMs > MAX_DRAIN_MS) {
      throw new RangeError(
        `drain period: expected whole milliseconds from 0 to ${MAX_DRAIN_MS}, got ${drainMs}`,
      );
    }
  }

  /** Where the process is now. */
  get state(): DrainState {
    return this.#state;
  }

  /** True until the drain starts: the readiness check (`startOpsHttp`'s `healthy`). Bound, pass it as is. */
  readonly ready = (): boolean => this.#state === "serving";

  /**
   * True during the drain period: the process still serves, and its HTTP answers should carry
   * `Connection: close` so clients open their next connection to another replica. Bound.
   */
  readonly draining = (): boolean => this.#state === "draining";

  /**
   * Starts the drain: {@link ready} turns false at once; resolves after `drainMs`, or earlier when
   * {@link skip} is called or the process gets another SIGINT or SIGTERM (someone wants it stopped
   * now). Logs `{event: "drain", drainMs}` at the start and `{event: "drained", ms, skipped}` at the
   * end. A second call returns the first call's promise. Never rejects.
   */
  drain(logger?: Logger): Promise<void> {
    if (this.#done) return this.#done;
    this.#state = "draining";
    const started = performance.now();
    logger?.info({ event: "drain", drainMs: this.drainMs }, "not ready; serving until the drain period ends");
    this.#done = new Promise<void>((resolve) => {
      let skipped = false;
      const end = () => {
        clearTimeout(timer);
        process.off("SIGINT", onSignal);
        process.off("SIGTERM", onSignal);
        this.#skip = undefined;
        this.#state = "stopping";
        logger?.info(
          { event: "drained", ms: Math.round(performance.now() - started), skipped },
          "drain period over; stopping",
        );
        resolve();
      };
      const onSignal = () => {
        skipped = true;
        end();
      };
      const timer = setTimeout(end, this.drainMs);
      // Listeners added while a signal is being handled do not see that signal: only a later one.
      process.on("SIGINT", onSignal);
      process.on("SIGTERM", onSignal);
      this.#skip = onSignal;
    });
    return this.#done;
  }

  /** Ends a drain under way at once (nothing when none is). */
  skip(): void {
    this.#skip?.();
  }
}
