import assert from "node:assert/strict";
import { test } from "node:test";
import { openEventStore, parseStoreUrl } from "../src/open.ts";
import { InvalidEvent, StoreUnavailable } from "../src/port.ts";

test("one URL selects the backend", () => {
  assert.deepEqual(parseStoreUrl("sqlite:./events.sqlite"), { backend: "sqlite", path: "./events.sqlite" });
  assert.deepEqual(parseStoreUrl("sqlite:///var/lib/g/events.sqlite"), {
    backend: "sqlite",
    path: "/var/lib/g/events.sqlite",
  });
  assert.deepEqual(parseStoreUrl("sqlite::memory:"), { backend: "sqlite", path: ":memory:" });
  assert.equal(parseStoreUrl("postgresql://a:b@db:5432/x").backend, "postgres");
  assert.equal(parseStoreUrl("kurrentdb://k:2113?tls=false").backend, "kurrentdb");
  assert.throws(() => parseStoreUrl("sqlite:"), InvalidEvent);
  assert.throws(
    () => parseStoreUrl("mysql://u:pw@db/x"),
    (e: Error) =>
      e instanceof InvalidEvent && /mysql:\/\/u:\*\*\*@db\/x/.test(e.message) && !/pw/.test(e.message),
  );
});

test("kurrentdb:// fails fast: the backend is not built", async () => {
  await assert.rejects(openEventStore("kurrentdb://127.0.0.1:2113"), StoreUnavailable);
});
