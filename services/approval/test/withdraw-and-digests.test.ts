/**
 * Over gRPC, with the decision service: an approval withdrawn before a worker claims it is never
 * applied (its approved dependents are withdrawn with it), an action already applied cannot be
 * withdrawn, and a batch bound to descriptions is refused whole when one digest does not match.
 * No worker runs at first, so the approvals stay unclaimed until the test starts one.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import {
  type ActionRecord,
  ActionStatus,
  type DecisionResponse,
  type SubmitActionResponse,
} from "@gatehouse/proto";
import { status } from "@grpc/grpc-js";
import { call, description, eventually, type Stack, startHarness, startStack } from "./harness.ts";

let stack: Stack;
before(async () => {
  stack = await startStack({ startWorker: false });
});
after(async () => {
  await stack?.close();
});

test("withdrawn approvals are never applied; a stale digest refuses the whole batch; applied ones cannot be withdrawn", async () => {
  const h = await startHarness(stack, { service: { decisionAcceptTimeoutMs: 1000 } });
  try {
    const submit = async (localId: string, dependsOn: string[] = []) =>
      (
        await call<unknown, SubmitActionResponse>(h.queue, "submitAction", {
          callerToken: h.token("MEM"),
          localId,
          description: description({ title: `write ${localId}`, dependsOn }),
          payloadJson: "{}",
        })
      ).actionId;
    const a = await submit("a");
    const b = await submit("b", ["a"]);
    const c = await submit("c");
    const get = (id: number) =>
      call<unknown, ActionRecord>(h.decisions, "getAction", { workspaceId: h.ws, actionId: id });
    const digests = Object.fromEntries(
      await Promise.all([a, b, c].map(async (id) => [id, (await get(id)).descriptionDigest] as const)),
    );
    assert.ok(
      Object.values(digests).every((d) => /^[0-9a-f]{64}$/.test(d)),
      "records carry their digest",
    );

    // One wrong digest (another action's): nothing in the batch is approved.
    await assert.rejects(
      call(h.decisions, "approveBatch", {
        workspaceId: h.ws,
        actionIds: [a, b, c],
        decidedBy: "user:alice",
        all: false,
        returnOnceRecorded: true,
        descriptionDigests: { ...digests, [c]: digests[a] },
      }),
      (err: { code: number; details: string }) =>
        err.code === status.FAILED_PRECONDITION && /action \d+ .*nothing was approved/.test(err.details),
    );
    for (const id of [a, b, c]) assert.equal((await get(id)).status, ActionStatus.ACTION_STATUS_PENDING);

    // The same batch with the digests as shown is approved, each approval recording its digest.
    await call<unknown, DecisionResponse>(h.decisions, "approveBatch", {
      workspaceId: h.ws,
      actionIds: [a, b, c],
      decidedBy: "user:alice",
      all: false,
      returnOnceRecorded: true,
      descriptionDigests: digests,
    });
    const approvedEvents = (await h.store.readStream(`workspace-${h.ws}`, { fromRevision: 0 })).filter(
      (e) => e.type === "ActionApproved",
    );
    assert.deepEqual(
      approvedEvents.map((e) => (e.data as { descriptionDigest: string }).descriptionDigest),
      [digests[a], digests[b], digests[c]],
    );

    // Withdrawing a takes b (which needs it) back too; c stays approved.
    const withdrawn = await call<unknown, DecisionResponse>(h.decisions, "withdrawApproval", {
      workspaceId: h.ws,
      actionIds: [a],
      withdrawnBy: "user:alice",
      reason: "not yet",
    });
    assert.deepEqual(
      withdrawn.actions.map((r) => [r.id, r.status, r.withdrawnBy]),
      [
        [a, ActionStatus.ACTION_STATUS_PENDING, "user:alice"],
        [b, ActionStatus.ACTION_STATUS_PENDING, "user:alice"],
      ],
    );

    // A worker starts: only c is applied; a and b stay pending and never reach the gatekeeper.
    await stack.worker.start();
    assert.ok(
      await eventually(async () => (await get(c)).status === ActionStatus.ACTION_STATUS_APPLIED),
      `action ${c} should be applied once a worker runs:\n${stack.worker.log()}`,
    );
    assert.deepEqual(
      h.gatekeeper.appliedIn(h.ws).map((r) => r.actionId),
      [c],
    );
    assert.equal((await get(a)).status, ActionStatus.ACTION_STATUS_PENDING);
    assert.equal((await get(b)).status, ActionStatus.ACTION_STATUS_PENDING);

    // An applied action's approval cannot be taken back.
    await assert.rejects(
      call(h.decisions, "withdrawApproval", { workspaceId: h.ws, actionIds: [c], withdrawnBy: "user:alice" }),
      (err: { code: number; details: string }) =>
        err.code === status.FAILED_PRECONDITION &&
        new RegExp(`action ${c} .*nothing was withdrawn`).test(err.details),
    );
  } finally {
    await h.close();
  }
});
