import assert from "node:assert/strict";
import { test } from "node:test";
import { type MakeStore, numbered, sleep, uniqueStream, waitFor, withStore } from "./conformance-helpers.ts";
import type { StoredEvent } from "./port.ts";

/** Appends `total` events in batches of 1..3 while yielding to the event loop between batches. */
async function appendRacing(
  store: import("./port.ts").EventStore,
  stream: string,
  start: number,
  total: number,
) {
  let n = start;
  while (n < start + total) {
    const size = Math.min(1 + (n % 3), start + total - n);
    await store.append(stream, numbered(size, n), "any");
    n += size;
    await new Promise((resolve) => setImmediate(resolve));
  }
}

const ns = (events: StoredEvent[]) => events.map((e) => (e.data as { n: number }).n);
const range = (count: number) => Array.from({ length: count }, (_, i) => i);

/** Registers the subscription tests: catch-up-then-live without gaps or duplicates, serialization, close, errors. */
export function registerSubscribeTests(makeStore: MakeStore): void {
  test("subscribeToStream delivers stored then live events exactly once, in order, while appends race the catch-up", () =>
    withStore(makeStore, async (store) => {
      const stream = uniqueStream("sub-stream");
      await store.append(stream, numbered(300), "no_stream");
      const seen: StoredEvent[] = [];
      let inFlight = 0;
      let maxInFlight = 0;
      const sub = store.subscribeToStream(stream, {
        onEvent: async (event) => {
          inFlight += 1;
          maxInFlight = Math.max(maxInFlight, inFlight);
          if (event.revision % 50 === 0) await sleep(1);
          seen.push(event);
          inFlight -= 1;
        },
      });
      await appendRacing(store, stream, 300, 200);
      await waitFor("500 events", () => seen.length >= 500);
      await sleep(100);
      await sub.close();
      assert.deepEqual(ns(seen), range(500));
      assert.deepEqual(
        seen.map((e) => e.revision),
        range(500),
      );
      assert.equal(maxInFlight, 1, "handler calls never overlap");
    }));

  test("subscribeToStream with `after` starts strictly after that revision", () =>
    withStore(makeStore, async (store) => {
      const stream = uniqueStream("sub-after");
      await store.append(stream, numbered(5), "no_stream");
      const seen: number[] = [];
      const sub = store.subscribeToStream(stream, { after: 2, onEvent: (e) => void seen.push(e.revision) });
      await store.append(stream, numbered(1, 5), 4);
      await waitFor("revisions 3..5", () => seen.length >= 3);
      await sleep(50);
      await sub.close();
      assert.deepEqual(seen, [3, 4, 5]);
    }));

  test("subscribeToStream ignores other streams and waits for a stream that does not exist yet", () =>
    withStore(makeStore, async (store) => {
      const stream = uniqueStream("sub-later");
      const seen: StoredEvent[] = [];
      const sub = store.subscribeToStream(stream, { onEvent: (e) => void seen.push(e) });
      await store.append(uniqueStream("sub-noise"), numbered(3), "no_stream");
      await sleep(20);
      await store.append(stream, numbered(2), "no_stream");
      await waitFor("2 events", () => seen.length >= 2);
      await sleep(50);
      await sub.close();
      assert.deepEqual(
        seen.map((e) => [e.streamId, e.revision]),
        [
          [stream, 0],
          [stream, 1],
        ],
      );
    }));

  test("subscribeToAll delivers every stream's events in global order, no gaps or duplicates, under racing appends", () =>
    withStore(makeStore, async (store) => {
      const a = uniqueStream("sub-all-a");
      const b = uniqueStream("sub-all-b");
      await store.append(a, numbered(150), "no_stream");
      await store.append(b, numbered(150, 1000), "no_stream");
      const seen: StoredEvent[] = [];
      const sub = store.subscribeToAll({ onEvent: (e) => void seen.push(e) });
      await Promise.all([appendRacing(store, a, 150, 100), appendRacing(store, b, 1150, 100)]);
      const mine = () => seen.filter((e) => e.streamId === a || e.streamId === b);
      await waitFor("500 events", () => mine().length >= 500);
      await sleep(100);
      await sub.close();
      const positions = seen.map((e) => e.globalPosition);
      assert.ok(
        positions.every((p, i) => i === 0 || p > positions[i - 1]!),
        "global positions strictly increase (no duplicates, in order)",
      );
      const stored = (await store.readAll()).filter((e) => e.streamId === a || e.streamId === b);
      assert.deepEqual(
        mine().map((e) => e.globalPosition),
        stored.map((e) => e.globalPosition),
        "delivered exactly what is stored, nothing missing",
      );
      assert.deepEqual(ns(mine().filter((e) => e.streamId === a)), range(250));
    }));

  test("subscribeToAll with `after` starts strictly after that global position", () =>
    withStore(makeStore, async (store) => {
      const stream = uniqueStream("sub-all-after");
      const { events } = await store.append(stream, numbered(4), "no_stream");
      const seen: StoredEvent[] = [];
      const sub = store.subscribeToAll({
        after: events[1]!.globalPosition,
        onEvent: (e) => void seen.push(e),
      });
      await waitFor("2 events", () => seen.filter((e) => e.streamId === stream).length >= 2);
      await sleep(50);
      await sub.close();
      assert.deepEqual(
        seen.filter((e) => e.streamId === stream).map((e) => e.revision),
        [2, 3],
      );
    }));

  test("after close() resolves no handler runs, even for later appends", () =>
    withStore(makeStore, async (store) => {
      const stream = uniqueStream("sub-close");
      const seen: number[] = [];
      let running = false;
      const sub = store.subscribeToStream(stream, {
        onEvent: async (e) => {
          running = true;
          await sleep(30);
          seen.push(e.revision);
          running = false;
        },
      });
      await store.append(stream, numbered(1), "no_stream");
      await waitFor("the handler to start", () => running);
      await sub.close();
      assert.equal(running, false, "close waits for the in-flight handler");
      const count = seen.length;
      await store.append(stream, numbered(3, 1), 0);
      await sleep(150);
      assert.equal(seen.length, count);
    }));

  test("a handler may close its own subscription without deadlocking", () =>
    withStore(makeStore, async (store) => {
      const stream = uniqueStream("sub-self-close");
      await store.append(stream, numbered(5), "no_stream");
      const seen: number[] = [];
      const sub = store.subscribeToStream(stream, {
        onEvent: async (e) => {
          seen.push(e.revision);
          if (e.revision === 1) await sub.close();
        },
      });
      await waitFor("two events", () => seen.length >= 2);
      await sleep(50);
      assert.deepEqual(seen, [0, 1]);
    }));

  test("a throwing handler stops its subscription and reports the error to onError", () =>
    withStore(makeStore, async (store) => {
      const stream = uniqueStream("sub-error");
      await store.append(stream, numbered(3), "no_stream");
      const seen: number[] = [];
      const errors: Error[] = [];
      const sub = store.subscribeToStream(stream, {
        onEvent: (e) => {
          seen.push(e.revision);
          if (e.revision === 1) throw new Error("projection failed");
        },
        onError: (error) => void errors.push(error),
      });
      await waitFor("the error", () => errors.length === 1);
      await store.append(stream, numbered(1, 3), 2);
      await sleep(100);
      await sub.close();
      assert.deepEqual(seen, [0, 1]);
      assert.equal(errors[0]!.message, "projection failed");
    }));
}
