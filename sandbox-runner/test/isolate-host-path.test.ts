/** ensureIsolateHost rebuilds a bundle older than its sources, so an edited prelude never runs stale. */
import assert from "node:assert/strict";
import { statSync, utimesSync } from "node:fs";
import { test } from "node:test";
import { ensureIsolateHost, ISOLATE_HOST_PATH } from "../src/isolate-host-path.ts";

test("a bundle older than the files under src/ is rebuilt; an up-to-date one is kept", async () => {
  await ensureIsolateHost();
  const old = new Date("2001-01-01T00:00:00Z");
  utimesSync(ISOLATE_HOST_PATH, old, old);
  await ensureIsolateHost();
  const rebuilt = statSync(ISOLATE_HOST_PATH).mtimeMs;
  assert.ok(rebuilt > old.getTime(), "the stale bundle was written again");
  await ensureIsolateHost();
  assert.equal(statSync(ISOLATE_HOST_PATH).mtimeMs, rebuilt, "an up-to-date bundle is not rebuilt");
});
