/** Waiting on conditions in tests (never fixed sleeps). */

/**
 * Resolves once `check` returns true, polling every 20 ms.
 * @throws Error naming `what` after `timeoutMs` (default 60 s: CI machines are busy).
 */
export async function until(
  check: () => boolean | Promise<boolean>,
  what: string,
  timeoutMs = 60_000,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (await check()) return;
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for: ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}
