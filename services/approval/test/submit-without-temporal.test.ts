/**
 * SubmitAction never touches Temporal (issue 13: submission without Temporal on the hot path):
 * with the Temporal server stopped, submissions are appended and answered at once.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { ActionStatus, type SubmitActionResponse } from "@gatehouse/proto";
import { call, description, type Stack, startHarness, startStack } from "./harness.ts";

let stack: Stack;
before(async () => {
  stack = await startStack({ startWorker: false });
});
after(async () => {
  await stack?.close();
});

test("with Temporal stopped, 50 submissions are recorded and answered PENDING, each well under a second", async () => {
  const h = await startHarness(stack);
  try {
    await stack.temporal.close();
    const took: number[] = [];
    for (let i = 0; i < 50; i++) {
      const t = performance.now();
      const res = await call<unknown, SubmitActionResponse>(h.queue, "submitAction", {
        callerToken: h.token("MEM"),
        localId: `s${i}`,
        description: description(),
        payloadJson: "{}",
      });
      took.push(performance.now() - t);
      assert.equal(res.status, ActionStatus.ACTION_STATUS_PENDING);
    }
    const events = await h.store.readStream(`workspace-${h.ws}`);
    assert.equal(events.filter((e) => e.type === "ActionSubmitted").length, 50);
    const slowest = Math.max(...took);
    assert.ok(slowest < 1000, `slowest submission took ${slowest.toFixed(0)} ms`);
  } finally {
    await h.close();
  }
});
