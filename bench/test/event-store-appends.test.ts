import assert from "node:assert/strict";
import { mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { InvalidEvent } from "@gatehouse/event-store";
import { benchAppends } from "../event-store-appends.ts";

test("benchAppends measures the store and the raw-insert baseline in one run and removes its files", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-bench-test-"));
  try {
    const result = await benchAppends({ events: 500, batch: 10, dir });
    assert.equal(result.events, 500);
    assert.ok(result.eventsPerSec > 0 && Number.isFinite(result.eventsPerSec));
    assert.ok(result.rawInsertsPerSec > 0 && Number.isFinite(result.rawInsertsPerSec));
    assert.ok(Math.abs(result.ratio - result.eventsPerSec / result.rawInsertsPerSec) < 1e-9);
    assert.ok(
      Math.abs(result.eventsPerSec - 500 / (result.storeMs / 1000)) < 1e-6,
      "eventsPerSec is derived from the store phase",
    );
    assert.deepEqual(readdirSync(dir), [], "temporary databases are removed");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("benchAppends refuses a zero batch size, naming the option", async () => {
  await assert.rejects(benchAppends({ events: 10, batch: 0, dir: tmpdir() }), (error: unknown) => {
    assert.ok(error instanceof InvalidEvent);
    assert.match(error.message, /options\.batch/);
    return true;
  });
});
