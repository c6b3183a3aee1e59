import assert from "node:assert/strict";
import { test } from "node:test";
import { type MakeStore, numbered, uniqueStream, withStore } from "./conformance-helpers.ts";
import { type StoredEvent, StreamNotFound } from "./port.ts";

const ns = (events: StoredEvent[]) => events.map((e) => (e.data as { n: number }).n);
const revs = (events: StoredEvent[]) => events.map((e) => e.revision);

/** Registers the read tests: readStream both directions, readAll order, listStreams, streamRevision. */
export function registerReadTests(makeStore: MakeStore): void {
  test("readStream reads forwards and backwards from a revision, honouring maxCount", () =>
    withStore(makeStore, async (store) => {
      const stream = uniqueStream("read");
      await store.append(stream, numbered(10), "no_stream");
      assert.deepEqual(revs(await store.readStream(stream)), [0, 1, 2, 3, 4, 5, 6, 7, 8, 9]);
      assert.deepEqual(revs(await store.readStream(stream, { fromRevision: 7 })), [7, 8, 9]);
      assert.deepEqual(revs(await store.readStream(stream, { fromRevision: 3, maxCount: 2 })), [3, 4]);
      assert.deepEqual(
        revs(await store.readStream(stream, { direction: "backwards", maxCount: 3 })),
        [9, 8, 7],
      );
      assert.deepEqual(
        revs(await store.readStream(stream, { direction: "backwards", fromRevision: 4, maxCount: 10 })),
        [4, 3, 2, 1, 0],
      );
      assert.deepEqual(await store.readStream(stream, { fromRevision: 10 }), []);
      assert.deepEqual(ns(await store.readStream(stream, { fromRevision: 5, maxCount: 1 })), [5]);
    }));

  test("reading a stream that does not exist throws StreamNotFound", () =>
    withStore(makeStore, async (store) => {
      const stream = uniqueStream("absent");
      await assert.rejects(store.readStream(stream), (error: unknown) => {
        assert.ok(error instanceof StreamNotFound);
        assert.equal(error.streamId, stream);
        return true;
      });
      assert.equal(await store.streamRevision(stream), -1);
    }));

  test("headPosition is the global position of the last appended event", () =>
    withStore(makeStore, async (store) => {
      const before = await store.headPosition();
      const appended = await store.append(uniqueStream("head"), numbered(3), "no_stream");
      assert.equal(await store.headPosition(), appended.globalPosition);
      assert.ok(appended.globalPosition >= before + 3);
    }));

  test("readAll returns events of every stream in global (append) order", () =>
    withStore(makeStore, async (store) => {
      const a = uniqueStream("all-a");
      const b = uniqueStream("all-b");
      await store.append(a, numbered(2, 0), "no_stream");
      await store.append(b, numbered(1, 2), "no_stream");
      await store.append(a, numbered(2, 3), 1);
      const mine = (await store.readAll()).filter((e) => e.streamId === a || e.streamId === b);
      assert.deepEqual(ns(mine), [0, 1, 2, 3, 4]);
      const positions = mine.map((e) => e.globalPosition);
      assert.ok(
        positions.every((p, i) => i === 0 || p > positions[i - 1]!),
        "positions strictly increase",
      );
      const from = mine[2]!.globalPosition;
      const page = await store.readAll({ fromPosition: from, maxCount: 2 });
      assert.equal(page[0]!.globalPosition, from, "fromPosition is inclusive");
      assert.equal(page.length, 2);
    }));

  test("listStreams lists streams in creation order and filters by prefix", () =>
    withStore(makeStore, async (store) => {
      const prefix = uniqueStream("list");
      const names = [`${prefix}-c`, `${prefix}-a`, `${prefix}-b`];
      for (const name of names) await store.append(name, numbered(1), "no_stream");
      await store.append(names[1]!, numbered(1, 1), 0);
      assert.deepEqual(await store.listStreams(prefix), names);
      assert.deepEqual(await store.listStreams(`${prefix}-a`), [`${prefix}-a`]);
      assert.deepEqual(await store.listStreams(`${prefix}-zzz`), []);
      const all = await store.listStreams();
      assert.ok(names.every((n) => all.includes(n)));
    }));
}
