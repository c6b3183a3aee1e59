import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { runEventStoreConformance } from "@gatehouse/event-store/conformance";
import Database from "better-sqlite3";
import {
  type EventStore,
  openSqliteEventStore,
  type StoredEvent,
  verifyStream,
  WrongExpectedRevision,
} from "../src/index.ts";

const dir = mkdtempSync(join(tmpdir(), "gatehouse-event-store-"));
after(() => rmSync(dir, { recursive: true, force: true }));
let fileCounter = 0;
const freshFile = () => join(dir, `store-${++fileCounter}.db`);

runEventStoreConformance("sqlite file", async () => openSqliteEventStore(freshFile()));
runEventStoreConformance("sqlite :memory:", async () => openSqliteEventStore(":memory:"));

async function waitFor(what: string, condition: () => boolean, timeoutMs = 60_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
}

describe("sqlite: several connections on one file", () => {
  let path: string;
  let one: EventStore;
  let two: EventStore;
  before(() => {
    path = freshFile();
    one = openSqliteEventStore(path, { pollIntervalMs: 10 });
    two = openSqliteEventStore(path, { pollIntervalMs: 10 });
  });
  after(async () => {
    await one.close();
    await two.close();
  });

  test("the file is in WAL mode", () => {
    const raw = new Database(path, { readonly: true });
    try {
      assert.equal(raw.pragma("journal_mode", { simple: true }), "wal");
    } finally {
      raw.close();
    }
  });

  test("two writers racing on the same expected revision: one wins, the other gets WrongExpectedRevision", async () => {
    await one.append("race", [{ type: "Start", data: {} }], "no_stream");
    const outcomes = await Promise.allSettled([
      one.append("race", [{ type: "FromOne", data: {} }], 0),
      two.append("race", [{ type: "FromTwo", data: {} }], 0),
    ]);
    assert.equal(outcomes.filter((o) => o.status === "fulfilled").length, 1);
    const lost = outcomes.find((o) => o.status === "rejected");
    assert.ok(lost && lost.reason instanceof WrongExpectedRevision);
    assert.equal(await two.streamRevision("race"), 1);
  });

  test("interleaved appends from two connections keep one valid hash chain", async () => {
    for (let i = 0; i < 20; i++) {
      const writer = i % 2 === 0 ? one : two;
      await writer.append("chain", [{ type: "Step", data: { i } }], "any");
    }
    const result = await verifyStream(one, "chain");
    assert.equal(result.ok, true, result.problem);
    assert.equal(result.eventsChecked, 20);
  });

  test("a subscription on one connection sees events appended through the other", async () => {
    const seen: StoredEvent[] = [];
    const sub = one.subscribeToStream("cross", { onEvent: (e) => void seen.push(e) });
    await two.append("cross", [{ type: "A", data: { n: 0 } }], "no_stream");
    await two.append("cross", [{ type: "A", data: { n: 1 } }], 0);
    await waitFor("2 events from the other connection", () => seen.length >= 2);
    await sub.close();
    assert.deepEqual(
      seen.map((e) => e.revision),
      [0, 1],
    );
  });
});

describe("sqlite: across processes", () => {
  test("a subscribeToAll in this process receives, exactly once and in order, appends made by a child process", async () => {
    const path = freshFile();
    const store = openSqliteEventStore(path, { pollIntervalMs: 20 });
    try {
      await store.append("parent", [{ type: "Hello", data: {} }], "no_stream");
      const seen: StoredEvent[] = [];
      const sub = store.subscribeToAll({ after: 1, onEvent: (e) => void seen.push(e) });
      const fixture = fileURLToPath(new URL("./fixtures/append-from-child.ts", import.meta.url));
      await promisify(execFile)(process.execPath, ["--import", "tsx", fixture, path, "child", "40"], {
        timeout: 120_000,
      });
      await waitFor("40 events from the child", () => seen.length >= 40);
      // Exactly once: no event to wait on for an absence, so a short grace for a duplicate to show.
      await new Promise((resolve) => setTimeout(resolve, 100));
      await sub.close();
      assert.deepEqual(
        seen.map((e) => (e.data as { n: number }).n),
        Array.from({ length: 40 }, (_, i) => i),
      );
      assert.ok(seen.every((e) => e.streamId === "child" && (e.data as { pid: number }).pid !== process.pid));
    } finally {
      await store.close();
    }
  });
});

describe("sqlite: options and lifecycle", () => {
  test("an out-of-range option is refused with a message naming it", () => {
    assert.throws(() => openSqliteEventStore(":memory:", { pollIntervalMs: 0 }), /pollIntervalMs/);
  });

  test("a closed store refuses further calls with a clear error", async () => {
    const store = openSqliteEventStore(":memory:");
    await store.close();
    await assert.rejects(store.append("s", [{ type: "T", data: {} }], "any"), /event store is closed/);
  });

  test("data survives reopening the file", async () => {
    const path = freshFile();
    const first = openSqliteEventStore(path);
    await first.append("durable", [{ type: "T", data: { kept: true } }], "no_stream");
    await first.close();
    const second = openSqliteEventStore(path);
    try {
      const [event] = await second.readStream("durable");
      assert.deepEqual(event?.data, { kept: true });
    } finally {
      await second.close();
    }
  });
});
