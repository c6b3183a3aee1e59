/**
 * Files and sandboxes a runner leaves when it dies without closing: the next runner's start removes
 * every template dir whose owner is gone — killing a container still running from it — and leaves
 * the dirs of live runners alone. Real runsc containers (skipped without runsc).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { waitUntil } from "@gatehouse/service-kit";
import pino from "pino";
import { prepareBundleTemplate, removeBundleTemplate } from "../src/gvisor/bundle.ts";
import { startContainer } from "../src/gvisor/container.ts";
import { findRunsc } from "../src/gvisor/detect.ts";
import { reapStaleTemplates } from "../src/gvisor/stale.ts";
import { ensureIsolateHost } from "../src/isolate-host-path.ts";

const runsc = findRunsc();

test("a template whose runner is gone is removed with the container still running from it; a live runner's is kept", {
  skip: runsc ? false : "runsc not on PATH",
}, async () => {
  const parent = mkdtempSync(join(tmpdir(), "gatehouse-stale-"));
  try {
    const isolateHost = await ensureIsolateHost();
    const stale = await prepareBundleTemplate(isolateHost, parent);
    const live = await prepareBundleTemplate(isolateHost, parent);
    const container = await startContainer(runsc as string, stale, [
      stale.nodePath,
      "-e",
      "console.log('up'); setInterval(() => {}, 1000)",
    ]);
    let out = "";
    container.child.stdout.on("data", (d: Buffer) => {
      out += d.toString();
    });
    const closed = new Promise((r) => container.child.once("close", r));
    await waitUntil("the container's first line", () => out.includes("up"), { timeoutMs: 120_000 });
    // The stale template's owner: a process that has exited.
    const gone = spawnSync("true").pid;
    writeFileSync(join(stale.dataDir, "owner.json"), JSON.stringify({ pid: gone, startTicks: 1 }));

    const removed = await reapStaleTemplates(parent, runsc as string, pino({ level: "silent" }));
    assert.deepEqual(removed, [stale.dataDir]);
    assert.equal(existsSync(stale.dataDir), false);
    await closed; // the container's runsc process was killed
    assert.equal(existsSync(live.dataDir), true, "a live runner's template is left alone");
    await container.destroy();
    await removeBundleTemplate(live);
  } finally {
    rmSync(parent, { recursive: true, force: true });
  }
});
