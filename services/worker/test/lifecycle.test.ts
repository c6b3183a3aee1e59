/**
 * The action lifecycle on a real Temporal dev server with a real SQLite event store: decisions,
 * apply, cascade, expiry, queued decisions, races and a burst. The gatekeeper is a RecordingGatekeeper.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { cascadeReason } from "@gatehouse/approval-core";
import {
  actionStatusQuery,
  type DecisionOutcome,
  decideSignal,
  decideUpdate,
} from "@gatehouse/approval-core/lifecycle-contract";
import { ActionStatus } from "@gatehouse/proto";
import { waitUntil } from "@gatehouse/service-kit";
import { eventTypesOf, messagesOf, projected, sleep } from "./support/assertions.ts";
import { startAction, uniqueId } from "./support/driver.ts";
import { type Fixture, startFixture } from "./support/fixture.ts";
import { seedWorkspace, submit } from "./support/workspace.ts";

const alice = { kind: "approve" as const, decidedBy: "user:alice" };
const rejectBy = (reason: string) => ({ kind: "reject" as const, decidedBy: "user:bob", reason });

describe("action lifecycle workflow", () => {
  let f: Fixture;
  before(async () => {
    f = await startFixture();
  });
  after(async () => {
    await f?.close();
  });

  async function workspace(): Promise<string> {
    const ws = uniqueId("w");
    await seedWorkspace(f.store, ws);
    return ws;
  }

  test("approving an action applies it exactly once and records approved, applying, applied", async () => {
    const ws = await workspace();
    const id = await submit(f.streams, ws, "a1");
    const handle = await startAction(f.env.client, ws, id);
    const outcome = await handle.executeUpdate(decideUpdate, { args: [alice] });
    assert.deepEqual(outcome, { actionId: id, status: "applied", cascaded: [] });
    assert.deepEqual(await handle.result(), outcome);
    assert.equal(f.gatekeeper.appliesOf(ws, id), 1);
    assert.deepEqual(await eventTypesOf(f.store, ws, id), [
      "ActionSubmitted",
      "ActionApproved",
      "ActionApplying",
      "ActionApplied",
    ]);
    const a = await projected(f.store, ws, id);
    assert.equal(a.decidedBy, "user:alice");
    assert.match(a.claimedBy, new RegExp(`^action/${ws}/${id}/.+/attempt-1$`));
    const metrics = await f.worker.metrics.metrics();
    assert.match(
      metrics,
      /gatehouse_worker_activity_seconds_count\{activity="applyAction",outcome="ok"\} [1-9]/,
    );
    assert.match(
      metrics,
      /gatehouse_worker_workflow_seconds_count\{workflow="actionLifecycle",outcome="applied"\} [1-9]/,
    );
  });

  test("starting an action's workflow twice is a no-op: one run, one apply", async () => {
    const ws = await workspace();
    const id = await submit(f.streams, ws, "a1");
    const first = await startAction(f.env.client, ws, id);
    const second = await startAction(f.env.client, ws, id);
    assert.equal((await second.describe()).runId, (await first.describe()).runId);
    await first.executeUpdate(decideUpdate, { args: [alice] });
    assert.equal(f.gatekeeper.appliesOf(ws, id), 1);
  });

  test("rejecting an action cascades to its dependents: their workflows end rejected with cascadedFrom", async () => {
    const ws = await workspace();
    const a1 = await submit(f.streams, ws, "a1");
    const a2 = await submit(f.streams, ws, "a2", { dependsOn: ["a1"] });
    const a3 = await submit(f.streams, ws, "a3", { dependsOn: ["a2"] });
    const other = await submit(f.streams, ws, "other");
    const [h1, h2, h3, hOther] = await Promise.all(
      [a1, a2, a3, other].map((id) => startAction(f.env.client, ws, id)),
    );
    const outcome = await h1!.executeUpdate(decideUpdate, { args: [rejectBy("not this one")] });
    assert.deepEqual(outcome, {
      actionId: a1,
      status: "rejected",
      reason: "not this one",
      cascaded: [a2, a3],
    });
    const r2 = await h2!.result();
    const r3 = await h3!.result();
    assert.equal(r2.status, "rejected");
    assert.equal(r2.reason, cascadeReason(a1));
    assert.equal(r3.status, "rejected");
    assert.equal(r3.reason, cascadeReason(a2));
    assert.equal((await projected(f.store, ws, a2)).cascadedFrom, a1);
    assert.equal((await projected(f.store, ws, a3)).cascadedFrom, a2);
    assert.equal(await hOther!.query(actionStatusQuery), "waiting", "an unrelated action stays pending");
    assert.equal((await projected(f.store, ws, other)).status, ActionStatus.ACTION_STATUS_PENDING);
    assert.equal(
      f.gatekeeper.appliesOf(ws, a1) + f.gatekeeper.appliesOf(ws, a2) + f.gatekeeper.appliesOf(ws, a3),
      0,
    );
    const noticed = f.gatekeeper.rejected.filter((r) => r.workspaceId === ws).map((r) => r.actionId);
    assert.deepEqual(
      noticed.sort((x, y) => x - y),
      [a1, a2, a3],
    );
    await expectRefused(
      h2!.executeUpdate(decideUpdate, { args: [alice] }),
      /already completed|already rejected/,
    );
  });

  test("approve, then reject while it applies: the action is applied and the reject is refused with a clear error", async () => {
    const ws = await workspace();
    const id = await submit(f.streams, ws, "a1");
    const handle = await startAction(f.env.client, ws, id);
    f.gatekeeper.block();
    try {
      const approving = handle.executeUpdate(decideUpdate, { args: [alice] });
      await waitUntil(
        "the approved action to be applying",
        async () => (await handle.query(actionStatusQuery)) === "applying",
      );
      await expectRefused(
        handle.executeUpdate(decideUpdate, { args: [rejectBy("changed my mind")] }),
        new RegExp(`action ${id} was already approved by user:alice`),
      );
      f.gatekeeper.release();
      assert.equal((await approving).status, "applied");
    } finally {
      f.gatekeeper.release();
    }
    assert.equal((await projected(f.store, ws, id)).status, ActionStatus.ACTION_STATUS_APPLIED);
    assert.equal(f.gatekeeper.appliesOf(ws, id), 1);
  });

  test("approving an action whose dependency is undecided is refused and the workflow keeps waiting", async () => {
    const ws = await workspace();
    const a1 = await submit(f.streams, ws, "a1");
    const a2 = await submit(f.streams, ws, "a2", { dependsOn: ["a1"] });
    const [h1, h2] = await Promise.all([a1, a2].map((id) => startAction(f.env.client, ws, id)));
    await expectRefused(
      h2!.executeUpdate(decideUpdate, { args: [alice] }),
      /depends on undecided action\(s\)/,
    );
    assert.equal(await h2!.query(actionStatusQuery), "waiting");
    await h1!.executeUpdate(decideUpdate, { args: [alice] });
    const outcome = await h2!.executeUpdate(decideUpdate, { args: [alice] });
    assert.equal(outcome.status, "applied");
    assert.deepEqual(
      f.gatekeeper.applied.filter((r) => r.workspaceId === ws).map((r) => r.actionId),
      [a1, a2],
    );
  });

  test("a short TTL expires the action with reason expired, decided by system:expiry, and its dependents cascade", async () => {
    const ws = await workspace();
    const a1 = await submit(f.streams, ws, "a1");
    const a2 = await submit(f.streams, ws, "a2", { dependsOn: ["a1"] });
    const h1 = await startAction(f.env.client, ws, a1, { ttlMs: 1500 });
    const h2 = await startAction(f.env.client, ws, a2);
    const r1 = await h1.result();
    assert.deepEqual(r1, { actionId: a1, status: "rejected", reason: "expired", cascaded: [a2] });
    const p1 = await projected(f.store, ws, a1);
    assert.equal(p1.decidedBy, "system:expiry");
    const r2 = await h2.result();
    assert.equal(r2.status, "rejected");
    assert.equal((await projected(f.store, ws, a2)).cascadedFrom, a1);
    assert.equal(f.gatekeeper.appliesOf(ws, a1), 0);
  });

  test("a decision signalled while no worker polls is applied once a worker starts", async () => {
    const ws = await workspace();
    const id = await submit(f.streams, ws, "a1");
    const queue = uniqueId("idle-queue");
    const handle = await startAction(f.env.client, ws, id, { taskQueue: queue });
    await handle.signal(decideSignal, alice);
    // No worker polls this queue, so nothing can happen and there is no event to wait on: a short
    // grace shows that nothing did.
    await sleep(500);
    assert.equal(f.gatekeeper.appliesOf(ws, id), 0);
    assert.equal((await projected(f.store, ws, id)).status, ActionStatus.ACTION_STATUS_PENDING);
    await f.startWorker(queue);
    const outcome = await handle.result();
    assert.equal(outcome.status, "applied");
    assert.equal(f.gatekeeper.appliesOf(ws, id), 1);
    assert.equal((await projected(f.store, ws, id)).decidedBy, "user:alice");
  });

  test("a gatekeeper that is down is retried without a claim, and the action is applied once it is back", async () => {
    const ws = await workspace();
    const id = await submit(f.streams, ws, "a1");
    const handle = await startAction(f.env.client, ws, id);
    f.gatekeeper.unreachable = true;
    try {
      await handle.signal(decideSignal, alice);
      const refused = f.gatekeeper.refusedReady;
      await waitUntil("a retried apply attempt", () => f.gatekeeper.refusedReady >= refused + 2);
      assert.deepEqual(await eventTypesOf(f.store, ws, id), ["ActionSubmitted", "ActionApproved"]);
    } finally {
      f.gatekeeper.unreachable = false;
    }
    assert.equal((await handle.result()).status, "applied");
    assert.equal(f.gatekeeper.appliesOf(ws, id), 1);
  });

  test("a gatekeeper's ok=false fails the action with its message, is not retried, and cascades", async () => {
    const ws = await workspace();
    const a1 = await submit(f.streams, ws, "a1");
    const a2 = await submit(f.streams, ws, "a2", { dependsOn: ["a1"] });
    f.gatekeeper.answers.set(`${ws}/${a1}`, { ok: false, resultJson: "", error: "entity already exists" });
    const h1 = await startAction(f.env.client, ws, a1);
    const h2 = await startAction(f.env.client, ws, a2);
    const outcome = await h1.executeUpdate(decideUpdate, { args: [alice] });
    assert.deepEqual(outcome, {
      actionId: a1,
      status: "failed",
      reason: "entity already exists",
      cascaded: [a2],
    });
    assert.equal(f.gatekeeper.appliesOf(ws, a1), 1);
    const p1 = await projected(f.store, ws, a1);
    assert.equal(p1.status, ActionStatus.ACTION_STATUS_FAILED);
    assert.equal(p1.outcomeUnknown, false);
    assert.equal((await h2.result()).status, "rejected");
  });

  test("50 decisions in a burst to one workspace are each applied or rejected exactly once, and the projection agrees with every workflow", async () => {
    const ws = await workspace();
    const ids: number[] = [];
    for (let i = 0; i < 50; i++) ids.push(await submit(f.streams, ws, `b${i}`));
    const handles = await Promise.all(ids.map((id) => startAction(f.env.client, ws, id)));
    const rejects = (i: number) => i % 3 === 0;
    const outcomes: DecisionOutcome[] = await Promise.all(
      handles.map((h, i) =>
        h.executeUpdate(decideUpdate, { args: [rejects(i) ? rejectBy(`no ${i}`) : alice] }),
      ),
    );
    for (const [i, id] of ids.entries()) {
      const expected = rejects(i) ? "rejected" : "applied";
      assert.equal(outcomes[i]?.status, expected, `action ${id}`);
      assert.equal(f.gatekeeper.appliesOf(ws, id), rejects(i) ? 0 : 1, `apply calls of action ${id}`);
      const final = await handles[i]!.result();
      const p = await projected(f.store, ws, id);
      const projectedStatus =
        p.status === ActionStatus.ACTION_STATUS_APPLIED
          ? "applied"
          : p.status === ActionStatus.ACTION_STATUS_REJECTED
            ? "rejected"
            : `other:${p.status}`;
      assert.equal(projectedStatus, final.status, `projection of action ${id}`);
      const types = await eventTypesOf(f.store, ws, id);
      assert.equal(
        types.filter((t) => t === "ActionApproved" || t === "ActionRejected").length,
        1,
        `one decision for ${id}`,
      );
    }
  });
});

async function expectRefused(p: Promise<unknown>, pattern: RegExp): Promise<void> {
  await assert.rejects(p, (err: unknown) => {
    assert.match(messagesOf(err), pattern);
    return true;
  });
}
