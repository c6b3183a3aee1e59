/** Graceful shutdown shared by every service process. */
import type { Logger } from "pino";

/**
 * On the first SIGINT or SIGTERM: logs `{event: "shutdown", signal}`, runs `closers` in order
 * (a failing closer is logged and the rest still run), then exits 0. Later signals are ignored.
 */
export function stopOnSignals(logger: Logger, ...closers: Array<() => Promise<void> | void>): void {
  let stopping = false;
  const stop = async (signal: string) => {
    if (stopping) return;
    stopping = true;
    logger.info({ event: "shutdown", signal }, "shutting down");
    for (const close of closers) {
      try {
        await close();
      } catch (err) {
        logger.warn({ event: "shutdown_step_failed", err: (err as Error).message }, "a shutdown step failed");
      }
    }
    process.exit(0);
  };
  process.on("SIGINT", () => void stop("SIGINT"));
  process.on("SIGTERM", () => void stop("SIGTERM"));
}
