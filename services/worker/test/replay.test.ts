/**
 * Workflow determinism: every history recorded under test/histories/ (by `npm run record-histories`)
 * replays against the current workflow code without a non-determinism error. A change that alters
 * the sequence of commands of an existing workflow fails here; version it (patched()) instead.
 */
import assert from "node:assert/strict";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { test } from "node:test";
import { fileURLToPath } from "node:url";
import proto from "@temporalio/proto";
import { Worker } from "@temporalio/worker";
import { bundleLifecycleWorkflows } from "../src/index.ts";

const DIR = fileURLToPath(new URL("./histories/", import.meta.url));

test("recorded workflow histories replay deterministically against the current workflow code", async () => {
  const files = readdirSync(DIR)
    .filter((f) => f.endsWith(".json"))
    .sort();
  assert.ok(files.length >= 8, `expected the recorded histories, found ${files.length}`);
  const histories = files.map((file) => ({
    workflowId: file.replace(/\.json$/, ""),
    // fromObject (not the SDK's historyFromJSON, which trips over two protobufjs copies in this tree)
    history: proto.temporal.api.history.v1.History.fromObject(
      JSON.parse(readFileSync(join(DIR, file), "utf8")),
    ),
  }));
  const failures: string[] = [];
  let replayed = 0;
  const workflowBundle = await bundleLifecycleWorkflows();
  for await (const result of Worker.runReplayHistories({ workflowBundle }, histories)) {
    replayed++;
    if (result.error) failures.push(`${result.workflowId}: ${result.error.message}`);
  }
  assert.equal(replayed, files.length);
  assert.deepEqual(failures, []);
});
