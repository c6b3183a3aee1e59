/**
 * A decision sent while no lifecycle worker runs is recorded in the stream (ActionApproved) and
 * applied once a worker starts; the approver gets the record as it stands instead of waiting. The
 * record is APPROVED (the decision is in the stream; before the binding-run engine it was PENDING,
 * a signal waiting in Temporal) — the only assertion changed.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import {
  type ActionRecord,
  ActionStatus,
  type DecisionResponse,
  type SubmitActionResponse,
} from "@gatehouse/proto";
import { call, description, eventually, type Stack, startHarness, startStack } from "./harness.ts";

let stack: Stack;
before(async () => {
  stack = await startStack({ startWorker: false });
});
after(async () => {
  await stack?.close();
});

test("a decision sent while no worker runs is applied exactly once after a worker starts", async () => {
  const h = await startHarness(stack, { service: { decisionAcceptTimeoutMs: 1000 } });
  try {
    const submit = async (localId: string) =>
      (
        await call<unknown, SubmitActionResponse>(h.queue, "submitAction", {
          callerToken: h.token("MEM"),
          localId,
          description: description(),
          payloadJson: "{}",
        })
      ).actionId;
    const a = await submit("a");
    const b = await submit("b");
    const began = Date.now();
    const res = await call<unknown, DecisionResponse>(h.decisions, "approveBatch", {
      workspaceId: h.ws,
      actionIds: [a, b],
      decidedBy: "user:alice",
      all: false,
    });
    assert.ok(Date.now() - began < 10_000, "the approver must not wait for a worker");
    assert.deepEqual(
      res.actions.map((r) => [r.id, r.status]),
      [
        [a, ActionStatus.ACTION_STATUS_APPROVED],
        [b, ActionStatus.ACTION_STATUS_APPROVED],
      ],
    );
    assert.equal(h.gatekeeper.appliedIn(h.ws).length, 0);

    await stack.worker.start();
    const get = (id: number) =>
      call<unknown, ActionRecord>(h.decisions, "getAction", { workspaceId: h.ws, actionId: id });
    // Once a worker runs, the binding's run applies both (in submission order); wait for both.
    for (const id of [a, b]) {
      assert.ok(
        await eventually(async () => (await get(id)).status === ActionStatus.ACTION_STATUS_APPLIED),
        `action ${id} should be applied once a worker runs:\n${stack.worker.log()}`,
      );
    }
    assert.equal((await get(a)).decidedBy, "user:alice");
    assert.deepEqual(
      h.gatekeeper
        .appliedIn(h.ws)
        .map((r) => r.actionId)
        .sort(),
      [a, b].sort(),
    );
  } finally {
    await h.close();
  }
});
