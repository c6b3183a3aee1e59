/** Waiting on a condition instead of for a fixed time (tests, start-ups, benches). */
import { setTimeout as sleep } from "node:timers/promises";

/** Options of {@link waitUntil}. */
export interface WaitUntilOptions {
  /** How long to keep trying, ms (default 60 000: generous, so a busy 2-core machine passes too). */
  timeoutMs?: number;
  /** Pause between checks, ms (default 50). */
  intervalMs?: number;
}

/**
 * Calls `check` until it returns a truthy value (or a promise of one), then returns that value.
 * `check` may throw to give up at once (e.g. the process it waits for exited); that error propagates.
 * @param what what is awaited, for the error, e.g. "the gatekeeper's listening line".
 * @throws Error "timed out after N ms waiting for <what>" once `timeoutMs` has passed.
 */
export async function waitUntil<T>(
  what: string,
  check: () => T | Promise<T>,
  options: WaitUntilOptions = {},
): Promise<NonNullable<T>> {
  const timeoutMs = options.timeoutMs ?? 60_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value as NonNullable<T>;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await sleep(options.intervalMs ?? 50);
  }
}
