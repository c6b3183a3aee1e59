import { randomUUID } from "node:crypto";
import type { EventStore, NewEvent } from "./port.ts";

/** Makes a fresh store for one conformance test; the test closes it. */
export type MakeStore = () => Promise<EventStore>;

/** Runs `body` against a fresh store and closes the store afterwards, pass or fail. */
export async function withStore(
  makeStore: MakeStore,
  body: (store: EventStore) => Promise<void>,
): Promise<void> {
  const store = await makeStore();
  try {
    await body(store);
  } finally {
    await store.close();
  }
}

/** A stream id unique to this run, so the suite also works against a shared server. */
export function uniqueStream(label: string): string {
  return `conformance-${label}-${randomUUID()}`;
}

/** `count` events of type `type` whose data is `{ n: start + i }`. */
export function numbered(count: number, start = 0, type = "Numbered"): NewEvent[] {
  return Array.from({ length: count }, (_, i) => ({ type, data: { n: start + i } }));
}

/**
 * Resolves when `condition()` is true, polling every 5 ms.
 * @throws Error naming `what` after `timeoutMs` (default 60 000: generous, so a busy machine passes too).
 */
export async function waitFor(what: string, condition: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out after ${timeoutMs} ms waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

/**
 * Sleeps `ms` milliseconds. Only for absence checks ("no duplicate arrives after the last expected
 * event"), where there is no condition to wait on; wait for what must happen with {@link waitFor}.
 */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
