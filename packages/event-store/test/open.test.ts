import assert from "node:assert/strict";
import { test } from "node:test";
import { KURRENT_OPEN_DEADLINE_MS, openEventStore, parseStoreUrl } from "../src/open.ts";
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
  // Schemes are case-insensitive; the rest of the URL is kept as written.
  assert.deepEqual(parseStoreUrl("POSTGRES://a:B@db:5432/X"), {
    backend: "postgres",
    url: "postgres://a:B@db:5432/X",
  });
  assert.deepEqual(parseStoreUrl("SQLite:./Events.sqlite"), { backend: "sqlite", path: "./Events.sqlite" });
  assert.throws(() => parseStoreUrl("sqlite:"), InvalidEvent);
  assert.throws(
    () => parseStoreUrl("mysql://u:pw@db/x"),
    (e: Error) =>
      e instanceof InvalidEvent && /mysql:\/\/u:\*\*\*@db\/x/.test(e.message) && !/pw/.test(e.message),
  );
});

test("kurrentdb:// with no server listening fails fast with StoreUnavailable naming the URL", async () => {
  const url = "kurrentdb://admin:s3cret@127.0.0.1:1?tls=false";
  const started = Date.now();
  await assert.rejects(openEventStore(url), (error: Error) => {
    assert.ok(error instanceof StoreUnavailable, String(error));
    assert.match(error.message, /kurrentdb:\/\/admin:\*\*\*@127\.0\.0\.1:1\?tls=false/);
    assert.doesNotMatch(error.message, /s3cret/);
    return true;
  });
  assert.ok(Date.now() - started < KURRENT_OPEN_DEADLINE_MS + 2000, "bounded by the open deadline");
});
