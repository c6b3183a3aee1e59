/**
 * The batch engine's own guarantees, on a real Temporal dev server and a real SQLite store (the
 * gatekeeper is the in-process RecordingGatekeeper, whose ApplyActions performs each action in
 * order and stops at the first failure): a run's claims are one append and one ApplyActions call;
 * actions the gatekeeper never started get their claims back (never "outcome unknown") and apply
 * in a later run; a dependency applied in another binding wakes the waiting binding's run.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { bindingRunWorkflowId } from "@gatehouse/approval-core/lifecycle-contract";
import { ActionStatus, ActionSubmitted } from "@gatehouse/proto";
import { waitUntil } from "@gatehouse/service-kit";
import { eventTypesOf, projected } from "./support/assertions.ts";
import { approve, type Engine, outcome, uniqueId } from "./support/driver.ts";
import { type Fixture, startFixture } from "./support/fixture.ts";
import { description, seedWorkspace, submit } from "./support/workspace.ts";

describe("binding runs", () => {
  let f: Fixture;
  let e: Engine;
  before(async () => {
    f = await startFixture();
    e = { client: f.env.client, streams: f.streams };
  });
  after(async () => {
    await f?.close();
  });

  async function workspace(bindings?: string[]): Promise<string> {
    const ws = uniqueId("w");
    await seedWorkspace(f.store, ws, bindings);
    return ws;
  }

  test("a batch of 30 approvals is claimed in one append and applied through one ApplyActions call, in submission order", async () => {
    const ws = await workspace();
    const ids: number[] = [];
    for (let i = 0; i < 30; i++) ids.push(await submit(f.streams, ws, `a${i}`));
    assert.deepEqual(await approve(e, ws, ids), ids);
    for (const id of ids) assert.equal((await outcome(e, ws, id)).status, "applied");
    const events = await f.store.readStream(`workspace-${ws}`);
    const approvals = events.filter((ev) => ev.type === "ActionApproved").map((ev) => ev.revision);
    const claims = events.filter((ev) => ev.type === "ActionApplying").map((ev) => ev.revision);
    const consecutive = (revs: number[]) =>
      revs.every((r, i) => i === 0 || r === (revs[i - 1] as number) + 1);
    assert.equal(approvals.length, 30);
    assert.ok(consecutive(approvals), "the 30 approvals are one append (consecutive revisions)");
    assert.equal(claims.length, 30);
    assert.ok(consecutive(claims), "the 30 claims are one append (consecutive revisions)");
    const runs = f.gatekeeper.runs.filter((r) => r.workspaceId === ws);
    assert.equal(runs.length, 1, "one ApplyActions call");
    assert.deepEqual(
      runs[0]?.actions.map((a) => a.actionId),
      ids,
    );
    for (const id of ids) assert.equal(f.gatekeeper.appliesOf(ws, id), 1);
  });

  test("a run's announcement goes on alongside the next run: the next run is scheduled before the announcement ends", async () => {
    const ws = await workspace();
    const turnId = uniqueId("exec");
    const ids: number[] = [];
    for (let i = 0; i < 4; i++)
      ids.push(await submit(f.streams, ws, `a${i}`, { await: true, executionId: turnId }));
    await approve(e, ws, ids, { run: { runMax: 2, idleMs: 300 } });
    const run = f.env.client.workflow.getHandle(bindingRunWorkflowId(ws, "MEM"));
    await run.result();
    const events = (await run.fetchHistory()).events ?? [];
    const scheduled = events.flatMap((ev) => {
      const type = ev.activityTaskScheduledEventAttributes?.activityType?.name;
      return type ? [{ type, id: Number(ev.eventId) }] : [];
    });
    const firstAnnounce = scheduled.find((a) => a.type === "announce");
    const secondRun = scheduled.filter((a) => a.type === "applyNextRun")[1];
    assert.ok(firstAnnounce && secondRun, "two runs and an announcement");
    const announceEnded = events.find(
      (ev) => Number(ev.activityTaskCompletedEventAttributes?.scheduledEventId) === firstAnnounce.id,
    );
    assert.ok(
      secondRun.id < Number(announceEnded?.eventId),
      "the second run was scheduled before the first announcement completed",
    );
    for (const id of ids) assert.equal((await outcome(e, ws, id)).status, "applied");
  });

  test("actions after a failure in a run are handed back unsent (not outcome unknown) and applied by the next run; the failure's dependent cascades", async () => {
    const ws = await workspace();
    const a1 = await submit(f.streams, ws, "a1");
    const bad = await submit(f.streams, ws, "bad");
    const dependent = await submit(f.streams, ws, "dependent", { dependsOn: ["bad"] });
    const a4 = await submit(f.streams, ws, "a4");
    const a5 = await submit(f.streams, ws, "a5");
    f.gatekeeper.answers.set(`${ws}/${bad}`, { ok: false, resultJson: "", error: "conflict" });
    await approve(e, ws, [a1, bad, dependent, a4, a5]);
    assert.equal((await outcome(e, ws, bad)).status, "failed");
    for (const id of [a4, a5]) assert.equal((await outcome(e, ws, id)).status, "applied");
    const d = await outcome(e, ws, dependent);
    assert.equal(d.status, "rejected");
    assert.equal((await projected(f.store, ws, dependent)).cascadedFrom, bad);
    assert.equal(f.gatekeeper.appliesOf(ws, dependent), 0, "the dependent never reached the gatekeeper");
    for (const id of [a4, a5]) {
      assert.equal(f.gatekeeper.appliesOf(ws, id), 1);
      assert.deepEqual(await eventTypesOf(f.store, ws, id), [
        "ActionSubmitted",
        "ActionApproved",
        "ActionApplying",
        "ActionClaimReleased",
        "ActionApplying",
        "ActionApplied",
      ]);
      assert.equal((await projected(f.store, ws, id)).outcomeUnknown, false);
    }
    const runs = f.gatekeeper.runs
      .filter((r) => r.workspaceId === ws)
      .map((r) => r.actions.map((a) => a.actionId));
    assert.deepEqual(runs, [
      [a1, bad, dependent, a4, a5],
      [a4, a5],
    ]);
  });

  test("a unit performed in one call (running heard for each) whose first action fails: the others are handed back unsent, not outcome unknown, and applied by the next run", async () => {
    const ws = await workspace();
    const c1 = await submit(f.streams, ws, "c1");
    const c2 = await submit(f.streams, ws, "c2");
    const c3 = await submit(f.streams, ws, "c3");
    // As git's one push for a run of commits: running for all three, then the push is refused.
    f.gatekeeper.together.set(`${ws}/${c1}`, 3);
    f.gatekeeper.answers.set(`${ws}/${c1}`, { ok: false, resultJson: "", error: "push refused" });
    await approve(e, ws, [c1, c2, c3]);
    const first = await outcome(e, ws, c1);
    assert.equal(first.status, "failed");
    assert.equal((await projected(f.store, ws, c1)).outcomeUnknown, false);
    for (const id of [c2, c3]) {
      assert.equal((await outcome(e, ws, id)).status, "applied");
      assert.deepEqual(await eventTypesOf(f.store, ws, id), [
        "ActionSubmitted",
        "ActionApproved",
        "ActionApplying",
        "ActionClaimReleased",
        "ActionApplying",
        "ActionApplied",
      ]);
      assert.equal((await projected(f.store, ws, id)).outcomeUnknown, false, "never outcome unknown");
    }
  });

  test("an action waiting on a dependency in another binding is woken by the run that applies it", async () => {
    const ws = await workspace(["MEM", "OTHER"]);
    const dep = await submit(f.streams, ws, "dep", { binding: "OTHER" });
    // Submission resolves dependencies within one binding; a cross-binding one is appended as the
    // stream would hold it.
    const head = (await f.store.readStream(`workspace-${ws}`)).at(-1)?.revision ?? -1;
    const { events } = await f.store.append(
      `workspace-${ws}`,
      [
        {
          type: "ActionSubmitted",
          data: ActionSubmitted.toJSON({
            binding: "MEM",
            localId: "waits",
            description: description(),
            dependsOn: [dep],
            payloadJson: "{}",
            executionId: "exec-1",
          }),
          metadata: { actor: "service:approval" },
        },
      ],
      head,
    );
    const waits = events[0]?.revision as number;
    f.gatekeeper.block();
    try {
      await approve(e, ws, [dep, waits]);
      await waitUntil("dep to be in flight at the gatekeeper", () => f.gatekeeper.appliesOf(ws, dep) === 1);
      // MEM's run looked while dep was in flight, found `waits` not claimable, and now waits for a wake.
      const mem = f.env.client.workflow.getHandle(bindingRunWorkflowId(ws, "MEM"));
      await waitUntil("MEM's run to find nothing claimable", async () =>
        ((await mem.fetchHistory()).events ?? []).some((ev) => ev.activityTaskCompletedEventAttributes),
      );
      assert.equal(f.gatekeeper.appliesOf(ws, waits), 0);
    } finally {
      f.gatekeeper.release();
    }
    assert.equal((await outcome(e, ws, dep)).status, "applied");
    assert.equal((await outcome(e, ws, waits)).status, "applied");
    const order = f.gatekeeper.applied.filter((r) => r.workspaceId === ws).map((r) => r.actionId);
    assert.deepEqual(order, [dep, waits]);
    assert.equal((await projected(f.store, ws, waits)).status, ActionStatus.ACTION_STATUS_APPLIED);
  });
});
