import assert from "node:assert/strict";
import { test } from "node:test";
import { type MakeStore, numbered, uniqueStream, withStore } from "./conformance-helpers.ts";
import { eventHash } from "./hash.ts";
import { type EventStore, InvalidEvent, type NewEvent, WrongExpectedRevision } from "./port.ts";

async function assertConflict(
  store: EventStore,
  stream: string,
  expected: Parameters<EventStore["append"]>[2],
  actual: number,
): Promise<void> {
  const before = await store.streamRevision(stream);
  await assert.rejects(store.append(stream, numbered(2, 100), expected), (error: unknown) => {
    assert.ok(error instanceof WrongExpectedRevision, `expected WrongExpectedRevision, got ${String(error)}`);
    assert.equal(error.streamId, stream);
    assert.equal(error.actual, actual);
    return true;
  });
  assert.equal(await store.streamRevision(stream), before, "a conflicting append must append nothing");
}

/** Registers the append tests: expected revision, conflicts, atomicity, metadata, hash chain, races. */
export function registerAppendTests(makeStore: MakeStore): void {
  test("appending to a new stream with no_stream stores consecutive revisions from 0", () =>
    withStore(makeStore, async (store) => {
      const stream = uniqueStream("new");
      const result = await store.append(stream, numbered(3), "no_stream");
      assert.equal(result.nextExpectedRevision, 2);
      assert.deepEqual(
        result.events.map((e) => e.revision),
        [0, 1, 2],
      );
      assert.equal(result.globalPosition, result.events[2]?.globalPosition);
      const read = await store.readStream(stream);
      assert.deepEqual(read, result.events, "what append returns is what readStream reads");
      assert.equal(await store.streamRevision(stream), 2);
    }));

  test("expected revision as a number appends only when it equals the stream's last revision", () =>
    withStore(makeStore, async (store) => {
      const stream = uniqueStream("number");
      await store.append(stream, numbered(2), "no_stream");
      const ok = await store.append(stream, numbered(1, 2), 1);
      assert.equal(ok.nextExpectedRevision, 2);
      await assertConflict(store, stream, 1, 2);
      await assertConflict(store, stream, 5, 2);
      await assertConflict(store, stream, "no_stream", 2);
      await assertConflict(store, uniqueStream("missing"), 0, -1);
    }));

  test("-1 means no_stream and 'any' appends whatever the revision", () =>
    withStore(makeStore, async (store) => {
      const stream = uniqueStream("any");
      await store.append(stream, numbered(1), -1);
      await assertConflict(store, stream, -1, 0);
      await store.append(stream, numbered(1, 1), "any");
      const fresh = uniqueStream("any-fresh");
      await store.append(fresh, numbered(1), "any");
      assert.equal(await store.streamRevision(stream), 1);
      assert.equal(await store.streamRevision(fresh), 0);
    }));

  test("a batch with one invalid event appends nothing at all", () =>
    withStore(makeStore, async (store) => {
      const stream = uniqueStream("atomic");
      await store.append(stream, numbered(1), "no_stream");
      const bad: NewEvent[] = [...numbered(2, 1), { type: "", data: {} }, ...numbered(1, 3)];
      await assert.rejects(store.append(stream, bad, 0), InvalidEvent);
      assert.equal(await store.streamRevision(stream), 0);
      assert.equal((await store.readStream(stream)).length, 1);
    }));

  test("metadata defaults are filled and caller metadata is kept", () =>
    withStore(makeStore, async (store) => {
      const stream = uniqueStream("meta");
      const caller = { kind: "agent", id: "chat-1" };
      const given = {
        eventId: "e-1",
        occurredAt: "2024-01-02T03:04:05.000Z",
        actor: "alice",
        caller,
        causationId: "c-1",
        correlationId: "r-1",
        schemaVersion: 2,
      };
      const { events } = await store.append(
        stream,
        [
          { type: "A", data: {} },
          { type: "B", data: {}, metadata: given },
        ],
        "any",
      );
      const [first, second] = await store.readStream(stream);
      assert.match(first!.metadata.eventId, /^[0-9a-f-]{36}$/);
      assert.notEqual(first!.metadata.eventId, events[1]!.metadata.eventId);
      assert.ok(!Number.isNaN(Date.parse(first!.metadata.occurredAt)));
      assert.equal(first!.metadata.actor, "");
      assert.equal(first!.metadata.causationId, "");
      assert.equal(first!.metadata.correlationId, "");
      assert.equal(first!.metadata.schemaVersion, 1);
      assert.deepEqual(
        { ...second!.metadata, prevHash: undefined, hash: undefined },
        {
          ...given,
          prevHash: undefined,
          hash: undefined,
        },
      );
    }));

  test("a traceparent in metadata is stored and covered by the hash; absent when not given; a malformed one is refused", () =>
    withStore(makeStore, async (store) => {
      const stream = uniqueStream("trace");
      const traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01";
      await store.append(
        stream,
        [
          { type: "Traced", data: { n: 1 }, metadata: { traceparent } },
          { type: "Untraced", data: { n: 2 } },
        ],
        "no_stream",
      );
      const [traced, untraced] = await store.readStream(stream);
      assert.equal(traced?.metadata.traceparent, traceparent);
      assert.equal(eventHash(traced!.type, traced!.data, traced!.metadata), traced!.metadata.hash);
      const other = { ...traced!.metadata, traceparent: traceparent.replace(/01$/, "00") };
      assert.notEqual(
        eventHash(traced!.type, traced!.data, other),
        traced!.metadata.hash,
        "the hash covers it",
      );
      assert.ok(untraced && !("traceparent" in untraced.metadata), "no traceparent key when none was given");
      await assert.rejects(
        store.append(
          stream,
          [{ type: "Bad", data: {}, metadata: { traceparent: "not-a-traceparent" } }],
          "any",
        ),
        (err: unknown) => err instanceof InvalidEvent && /metadata\.traceparent/.test((err as Error).message),
      );
      assert.equal(await store.streamRevision(stream), 1);
    }));

  test("every event is chained: prevHash is the previous hash and hash recomputes from the content", () =>
    withStore(makeStore, async (store) => {
      const stream = uniqueStream("chain");
      await store.append(stream, numbered(3), "no_stream");
      await store.append(stream, [{ type: "Later", data: { nested: { b: 1, a: [1, "x"] } } }], 2);
      let prev = "";
      for (const event of await store.readStream(stream)) {
        assert.equal(event.metadata.prevHash, prev, `revision ${event.revision} prevHash`);
        assert.match(event.metadata.hash, /^[0-9a-f]{64}$/);
        assert.equal(eventHash(event.type, event.data, event.metadata), event.metadata.hash);
        prev = event.metadata.hash;
      }
      const other = uniqueStream("chain-other");
      const { events } = await store.append(other, numbered(1), "no_stream");
      assert.equal(events[0]!.metadata.prevHash, "", "each stream's chain starts at ''");
    }));

  test("concurrent appends with the same expected revision: exactly one wins, the rest conflict", () =>
    withStore(makeStore, async (store) => {
      const stream = uniqueStream("race");
      await store.append(stream, numbered(1), "no_stream");
      const outcomes = await Promise.allSettled(
        Array.from({ length: 10 }, (_, i) => store.append(stream, numbered(2, 10 * i), 0)),
      );
      const won = outcomes.filter((o) => o.status === "fulfilled");
      const lost = outcomes.filter((o) => o.status === "rejected");
      assert.equal(won.length, 1);
      assert.ok(lost.every((o) => o.status === "rejected" && o.reason instanceof WrongExpectedRevision));
      assert.equal(await store.streamRevision(stream), 2);
    }));

  test("a retried append (same event ids, same expected revision) is stored once and answers with the stored events", () =>
    withStore(makeStore, async (store) => {
      const stream = uniqueStream("retry");
      const ids = (label: string, n: number) =>
        Array.from({ length: n }, (_, i) => `${stream}-${label}-${i}`);
      const batch = (label: string, n: number): NewEvent[] =>
        ids(label, n).map((eventId, i) => ({ type: "Retried", data: { label, i }, metadata: { eventId } }));
      const first = await store.append(stream, batch("a", 2), "no_stream");
      assert.deepEqual(
        await store.append(stream, batch("a", 2), "no_stream"),
        first,
        "retry of the first batch",
      );
      const second = await store.append(stream, batch("b", 3), 1);
      assert.deepEqual(
        await store.append(stream, batch("b", 3), 1),
        second,
        "retry with a numeric expected revision",
      );
      assert.deepEqual(await store.append(stream, batch("b", 3), "any"), second, "retry with any");
      assert.equal(await store.streamRevision(stream), 4);
      // Stored, but not where the expected revision puts it: a conflict, not a retry.
      await assert.rejects(store.append(stream, batch("a", 2), 4), WrongExpectedRevision);
      // Some ids stored, some new: the caller reused ids; nothing is appended.
      const mixed: NewEvent[] = [...batch("b", 3).slice(2), { type: "New", data: {} }];
      await assert.rejects(store.append(stream, mixed, 4), InvalidEvent);
      assert.equal(await store.streamRevision(stream), 4);
      // Concurrent retries of one append (a client retrying while the first try is still in flight).
      const outcomes = await Promise.all(
        Array.from({ length: 5 }, () => store.append(stream, batch("c", 2), 4)),
      );
      for (const outcome of outcomes) assert.deepEqual(outcome, outcomes[0]);
      assert.equal(await store.streamRevision(stream), 6);
      const all = await store.readStream(stream);
      assert.deepEqual(
        all.map((e) => e.metadata.eventId),
        [...ids("a", 2), ...ids("b", 3), ...ids("c", 2)],
      );
    }));

  test("unicode and large data roundtrip unchanged", () =>
    withStore(makeStore, async (store) => {
      const stream = uniqueStream("unicode-é-🚪");
      const data = {
        text: 'naïve café — 漢字 — 🚪🔑 — \u0000\u001f \u2028 "quotes" \\ back',
        big: "x".repeat(1_000_000),
        numbers: [0, -0.5, 1e21, 2 ** 53 - 1, 1.0000000000000002],
        nested: { ключ: [{ "🔑": true }, null] },
      };
      await store.append(stream, [{ type: "Ünïcode", data }], "no_stream");
      const [event] = await store.readStream(stream);
      assert.equal(event!.type, "Ünïcode");
      assert.deepEqual(event!.data, data);
      assert.deepEqual(await store.listStreams(stream), [stream]);
    }));

  test("invalid input is refused with InvalidEvent and appends nothing", () =>
    withStore(makeStore, async (store) => {
      const stream = uniqueStream("invalid");
      const cyclic: Record<string, unknown> = {};
      cyclic.self = cyclic;
      const cases: Array<[string, () => Promise<unknown>]> = [
        ["empty batch", () => store.append(stream, [], "any")],
        ["empty type", () => store.append(stream, [{ type: "", data: {} }], "any")],
        ["undefined data", () => store.append(stream, [{ type: "T", data: undefined }], "any")],
        ["BigInt data", () => store.append(stream, [{ type: "T", data: { n: 1n } }], "any")],
        ["NaN data", () => store.append(stream, [{ type: "T", data: { n: Number.NaN } }], "any")],
        ["cyclic data", () => store.append(stream, [{ type: "T", data: cyclic }], "any")],
        ["empty stream id", () => store.append("", numbered(1), "any")],
        ["fractional expected", () => store.append(stream, numbered(1), 1.5)],
        ["unknown expected", () => store.append(stream, numbered(1), "latest" as "any")],
        [
          "store-owned metadata",
          () => store.append(stream, [{ type: "T", data: {}, metadata: { hash: "x" } as object }], "any"),
        ],
        [
          "mistyped metadata",
          () => store.append(stream, [{ type: "T", data: {}, metadata: { actor: 7 } as object }], "any"),
        ],
      ];
      for (const [label, run] of cases) {
        await assert.rejects(run(), InvalidEvent, label);
      }
      assert.equal(await store.streamRevision(stream), -1);
    }));
}
