import { describe } from "node:test";
import { registerAppendTests } from "./conformance-append.ts";
import type { MakeStore } from "./conformance-helpers.ts";
import { registerReadTests } from "./conformance-read.ts";
import { registerSubscribeTests } from "./conformance-subscribe.ts";

export type { MakeStore } from "./conformance-helpers.ts";

/**
 * Registers the event-store contract suite (one contract every event-store backend runs)
 * as node:test tests inside `describe(name)`. Uses the {@link EventStore} port only; every test gets a fresh
 * store from `makeStore` and closes it, and uses unique stream ids, so it also runs against a shared server.
 * Call it at the top level of a `*.test.ts` file.
 */
export function runEventStoreConformance(name: string, makeStore: MakeStore): void {
  describe(`event store conformance: ${name}`, () => {
    registerAppendTests(makeStore);
    registerReadTests(makeStore);
    registerSubscribeTests(makeStore);
  });
}
