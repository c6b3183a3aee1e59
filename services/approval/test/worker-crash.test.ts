/**
 * The worker killed between ActionApplying and the gatekeeper's answer: after a restart the action
 * ends applied exactly once or failed as "outcome unknown" — never applied twice. The approver's
 * call waits through the crash and gets that outcome.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { ActionStatus, type DecisionResponse, type SubmitActionResponse } from "@gatehouse/proto";
import { call, description, type Stack, startHarness, startStack } from "./harness.ts";

let stack: Stack;
before(async () => {
  stack = await startStack();
});
after(async () => {
  await stack?.close();
});

test("a worker killed mid-apply never applies twice: the action ends applied once or failed with outcome unknown", async () => {
  const h = await startHarness(stack);
  try {
    const { actionId } = await call<unknown, SubmitActionResponse>(h.queue, "submitAction", {
      callerToken: h.token("MEM"),
      localId: "a",
      description: description(),
      payloadJson: "{}",
    });
    let restarted: Promise<void> | undefined;
    stack.gatekeeper.onApply = async (req) => {
      if (req.workspaceId !== h.ws || restarted) return;
      // The claim is in the stream and the request reached the gatekeeper: crash the worker now.
      restarted = stack.worker.stop("SIGKILL").then(() => stack.worker.start());
      await restarted;
    };
    const res = await call<unknown, DecisionResponse>(h.decisions, "approve", {
      workspaceId: h.ws,
      actionId,
      decidedBy: "user:alice",
    });
    await restarted;
    const rec = res.actions.find((r) => r.id === actionId);
    const applies = stack.gatekeeper.appliedIn(h.ws).filter((r) => r.actionId === actionId).length;
    assert.equal(applies, 1, "the gatekeeper must see the apply exactly once");
    if (rec?.status === ActionStatus.ACTION_STATUS_FAILED) {
      assert.equal(rec.outcomeUnknown, true);
      assert.match(rec.reason, /outcome is unknown/);
    } else {
      assert.equal(rec?.status, ActionStatus.ACTION_STATUS_APPLIED);
    }
  } finally {
    await h.close();
  }
});
