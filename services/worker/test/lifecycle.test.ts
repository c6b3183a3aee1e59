/**
 * The action lifecycle on a real Temporal dev server with a real SQLite event store: decisions
 * (appended directly, as the approval service does), batch apply by the binding's run, cascade,
 * expiry, decisions while no worker runs, races and a burst. The gatekeeper is a RecordingGatekeeper.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { cascadeReason } from "@gatehouse/approval-core";
import { ActionStatus } from "@gatehouse/proto";
import { waitUntil } from "@gatehouse/service-kit";
import { eventTypesOf, messagesOf, projected, sleep } from "./support/assertions.ts";
import { approve, type Engine, expire, outcome, reject, uniqueId, wake } from "./support/driver.ts";
import { type Fixture, startFixture } from "./support/fixture.ts";
import { seedWorkspace, submit } from "./support/workspace.ts";

describe("action lifecycle through binding runs", () => {
  let f: Fixture;
  let e: Engine;
  before(async () => {
    f = await startFixture();
    e = { client: f.env.client, streams: f.streams };
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
    await approve(e, ws, [id]);
    assert.deepEqual(await outcome(e, ws, id), { actionId: id, status: "applied", cascaded: [] });
    assert.equal(f.gatekeeper.appliesOf(ws, id), 1);
    assert.deepEqual(await eventTypesOf(f.store, ws, id), [
      "ActionSubmitted",
      "ActionApproved",
      "ActionApplying",
      "ActionApplied",
    ]);
    const a = await projected(f.store, ws, id);
    assert.equal(a.decidedBy, "user:alice");
    assert.match(a.claimedBy, new RegExp(`^binding-run/${ws}/MEM/.+/run-\\d+/attempt-1$`));
    const metrics = await f.worker.metrics.metrics();
    assert.match(
      metrics,
      /gatehouse_worker_activity_seconds_count\{activity="applyNextRun",outcome="ok"\} [1-9]/,
    );
    // approve → applied, from ActionApproved's time to the outcome's append (the SLO's histogram).
    assert.match(metrics, /gatehouse_worker_approval_to_outcome_seconds_count\{outcome="applied"\} [1-9]/);
  });

  test("waking a binding's run twice is harmless: one apply", async () => {
    const ws = await workspace();
    const id = await submit(f.streams, ws, "a1");
    await approve(e, ws, [id]);
    await wake(e, ws);
    await outcome(e, ws, id);
    await wake(e, ws);
    assert.equal(f.gatekeeper.appliesOf(ws, id), 1);
  });

  test("rejecting an action cascades to its dependents: they end rejected with cascadedFrom", async () => {
    const ws = await workspace();
    const a1 = await submit(f.streams, ws, "a1");
    const a2 = await submit(f.streams, ws, "a2", { dependsOn: ["a1"] });
    const a3 = await submit(f.streams, ws, "a3", { dependsOn: ["a2"] });
    const other = await submit(f.streams, ws, "other");
    await reject(e, ws, a1, "not this one");
    assert.deepEqual(await outcome(e, ws, a1), {
      actionId: a1,
      status: "rejected",
      reason: "not this one",
      cascaded: [a2, a3],
    });
    const r2 = await outcome(e, ws, a2);
    const r3 = await outcome(e, ws, a3);
    assert.equal(r2.status, "rejected");
    assert.equal(r2.reason, cascadeReason(a1));
    assert.equal(r3.status, "rejected");
    assert.equal(r3.reason, cascadeReason(a2));
    assert.equal((await projected(f.store, ws, a2)).cascadedFrom, a1);
    assert.equal((await projected(f.store, ws, a3)).cascadedFrom, a2);
    assert.equal((await projected(f.store, ws, other)).status, ActionStatus.ACTION_STATUS_PENDING);
    assert.equal(
      f.gatekeeper.appliesOf(ws, a1) + f.gatekeeper.appliesOf(ws, a2) + f.gatekeeper.appliesOf(ws, a3),
      0,
    );
    await waitUntil("the gatekeeper to hear of the three rejections", () =>
      [a1, a2, a3].every((id) =>
        f.gatekeeper.rejected.some((r) => r.workspaceId === ws && r.actionId === id),
      ),
    );
    const noticed = f.gatekeeper.rejected.filter((r) => r.workspaceId === ws).map((r) => r.actionId);
    assert.deepEqual(
      noticed.sort((x, y) => x - y),
      [a1, a2, a3],
    );
    await expectRefused(approve(e, ws, [a2]), /already completed|already rejected/);
  });

  test("approve, then reject while it applies: the action is applied and the reject is refused with a clear error", async () => {
    const ws = await workspace();
    const id = await submit(f.streams, ws, "a1");
    f.gatekeeper.block();
    try {
      await approve(e, ws, [id]);
      await waitUntil(
        "the approved action to be applying",
        async () => (await projected(f.store, ws, id)).status === ActionStatus.ACTION_STATUS_APPLYING,
      );
      await expectRefused(
        reject(e, ws, id, "changed my mind"),
        new RegExp(`action ${id} was already approved by user:alice`),
      );
      f.gatekeeper.release();
      assert.equal((await outcome(e, ws, id)).status, "applied");
    } finally {
      f.gatekeeper.release();
    }
    assert.equal((await projected(f.store, ws, id)).status, ActionStatus.ACTION_STATUS_APPLIED);
    assert.equal(f.gatekeeper.appliesOf(ws, id), 1);
  });

  test("approving an action whose dependency is undecided is refused and it stays pending", async () => {
    const ws = await workspace();
    const a1 = await submit(f.streams, ws, "a1");
    const a2 = await submit(f.streams, ws, "a2", { dependsOn: ["a1"] });
    await expectRefused(approve(e, ws, [a2]), /depends on undecided action\(s\)/);
    assert.equal((await projected(f.store, ws, a2)).status, ActionStatus.ACTION_STATUS_PENDING);
    await approve(e, ws, [a1]);
    await outcome(e, ws, a1);
    await approve(e, ws, [a2]);
    assert.equal((await outcome(e, ws, a2)).status, "applied");
    assert.deepEqual(
      f.gatekeeper.applied.filter((r) => r.workspaceId === ws).map((r) => r.actionId),
      [a1, a2],
    );
  });

  test("an expired action is rejected with reason expired, decided by system:expiry, and its dependents cascade", async () => {
    const ws = await workspace();
    const a1 = await submit(f.streams, ws, "a1");
    const a2 = await submit(f.streams, ws, "a2", { dependsOn: ["a1"] });
    const submittedBy = Date.now();
    // Both must be older than the 10 ms TTL of this sweep: wait on the clock, not a fixed pause.
    await waitUntil("both actions to be older than the 10 ms TTL", () => Date.now() > submittedBy + 10, {
      intervalMs: 5,
    });
    assert.deepEqual(await expire(e, ws, 10), [a1, a2]);
    assert.deepEqual(await outcome(e, ws, a1), {
      actionId: a1,
      status: "rejected",
      reason: "expired",
      cascaded: [a2],
    });
    const p1 = await projected(f.store, ws, a1);
    assert.equal(p1.decidedBy, "system:expiry");
    assert.equal((await outcome(e, ws, a2)).status, "rejected");
    assert.equal((await projected(f.store, ws, a2)).cascadedFrom, a1);
    assert.equal(f.gatekeeper.appliesOf(ws, a1), 0);
  });

  test("a decision recorded while no worker polls is applied once a worker starts", async () => {
    const ws = await workspace();
    const id = await submit(f.streams, ws, "a1");
    const queue = uniqueId("idle-queue");
    const idle = { ...e, taskQueue: queue };
    await approve(idle, ws, [id]);
    // No worker polls this queue, so nothing can happen and there is no event to wait on: a short
    // grace shows that nothing did.
    await sleep(500);
    assert.equal(f.gatekeeper.appliesOf(ws, id), 0);
    assert.equal((await projected(f.store, ws, id)).status, ActionStatus.ACTION_STATUS_APPROVED);
    await f.startWorker(queue);
    assert.equal((await outcome(e, ws, id)).status, "applied");
    assert.equal(f.gatekeeper.appliesOf(ws, id), 1);
    assert.equal((await projected(f.store, ws, id)).decidedBy, "user:alice");
  });

  test("a gatekeeper that is down is retried without a claim, and the action is applied once it is back", async () => {
    const ws = await workspace();
    const id = await submit(f.streams, ws, "a1");
    f.gatekeeper.unreachable = true;
    try {
      const refused = f.gatekeeper.refusedReady;
      await approve(e, ws, [id]);
      await waitUntil("a retried apply attempt", () => f.gatekeeper.refusedReady >= refused + 2);
      assert.deepEqual(await eventTypesOf(f.store, ws, id), ["ActionSubmitted", "ActionApproved"]);
    } finally {
      f.gatekeeper.unreachable = false;
    }
    assert.equal((await outcome(e, ws, id)).status, "applied");
    assert.equal(f.gatekeeper.appliesOf(ws, id), 1);
  });

  test("a gatekeeper's ok=false fails the action with its message, is not retried, and cascades", async () => {
    const ws = await workspace();
    const a1 = await submit(f.streams, ws, "a1");
    const a2 = await submit(f.streams, ws, "a2", { dependsOn: ["a1"] });
    f.gatekeeper.answers.set(`${ws}/${a1}`, { ok: false, resultJson: "", error: "entity already exists" });
    await approve(e, ws, [a1]);
    assert.deepEqual(await outcome(e, ws, a1), {
      actionId: a1,
      status: "failed",
      reason: "entity already exists",
      cascaded: [a2],
    });
    assert.equal(f.gatekeeper.appliesOf(ws, a1), 1);
    const p1 = await projected(f.store, ws, a1);
    assert.equal(p1.status, ActionStatus.ACTION_STATUS_FAILED);
    assert.equal(p1.outcomeUnknown, false);
    assert.equal((await outcome(e, ws, a2)).status, "rejected");
    assert.match(
      await f.worker.metrics.metrics(),
      /gatehouse_worker_approval_to_outcome_seconds_count\{outcome="failed"\} [1-9]/,
    );
  });

  test("50 decisions in a burst to one workspace are each applied or rejected exactly once, and the projection agrees", async () => {
    const ws = await workspace();
    const ids: number[] = [];
    for (let i = 0; i < 50; i++) ids.push(await submit(f.streams, ws, `b${i}`));
    const rejects = (i: number) => i % 3 === 0;
    await Promise.all(ids.map((id, i) => (rejects(i) ? reject(e, ws, id, `no ${i}`) : approve(e, ws, [id]))));
    for (const [i, id] of ids.entries()) {
      const expected = rejects(i) ? "rejected" : "applied";
      const final = await outcome(e, ws, id);
      assert.equal(final.status, expected, `action ${id}`);
      assert.equal(f.gatekeeper.appliesOf(ws, id), rejects(i) ? 0 : 1, `apply calls of action ${id}`);
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
