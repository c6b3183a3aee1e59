/**
 * Revocation and the action lifecycle on a real Temporal dev server with a real SQLite store: what
 * Kernel.RemoveBinding does (the RemoveBinding decision, one append, then the rejections handed to
 * the binding's run to announce) ends the actions rejected "binding removed", and an approval that
 * raced the removal is never applied — no call reaches the gatekeeper (a RecordingGatekeeper).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { decide, REMOVAL_REASON } from "@gatehouse/approval-core";
import { ActionStatus } from "@gatehouse/proto";
import { waitUntil } from "@gatehouse/service-kit";
import { eventTypesOf, projected } from "./support/assertions.ts";
import { announce, approve, type Engine, outcome, uniqueId } from "./support/driver.ts";
import { type Fixture, startFixture } from "./support/fixture.ts";
import { seedWorkspace, submit } from "./support/workspace.ts";

describe("removing a binding ends its actions' lifecycles", () => {
  let f: Fixture;
  let e: Engine;
  before(async () => {
    f = await startFixture();
    e = { client: f.env.client, streams: f.streams };
  });
  after(async () => {
    await f?.close();
  });

  /** What Kernel.RemoveBinding does: decide and append, then hand the rejections to the binding's run. */
  async function removeBinding(ws: string, binding = "MEM"): Promise<number[]> {
    const { events } = await f.streams.execute(ws, (s) =>
      decide({ type: "RemoveBinding", binding, removedBy: "user:owner", reason: "" }, s),
    );
    const rejected = events.slice(1).map((ev) => (ev.data as { actionId: number }).actionId);
    await announce(e, ws, rejected, binding);
    return rejected;
  }

  test("a pending action ends rejected 'binding removed' and it is propagated: its dependent ends by cascade, the gatekeeper hears of both", async () => {
    const ws = uniqueId("w");
    await seedWorkspace(f.store, ws);
    const a = await submit(f.streams, ws, "a1");
    const b = await submit(f.streams, ws, "b1", { dependsOn: ["a1"] });
    assert.deepEqual(await removeBinding(ws), [a, b]);
    assert.deepEqual(await outcome(e, ws, a), {
      actionId: a,
      status: "rejected",
      reason: REMOVAL_REASON,
      cascaded: [b],
    });
    assert.deepEqual(await outcome(e, ws, b), {
      actionId: b,
      status: "rejected",
      reason: `needed action ${a}, which did not complete`,
      cascaded: [],
    });
    assert.equal(f.gatekeeper.appliesOf(ws, a) + f.gatekeeper.appliesOf(ws, b), 0);
    await waitUntil("the gatekeeper was told of both rejections", async () =>
      [a, b].every((id) => f.gatekeeper.rejected.some((r) => r.workspaceId === ws && r.actionId === id)),
    );
  });

  test("an approval racing the removal is never applied: the action ends rejected and no call reaches the gatekeeper", async () => {
    const ws = uniqueId("w");
    await seedWorkspace(f.store, ws);
    const id = await submit(f.streams, ws, "a1");
    // The gatekeeper is down: the approved action's run is retried without a claim.
    f.gatekeeper.unreachable = true;
    try {
      const refused = f.gatekeeper.refusedReady;
      await approve(e, ws, [id]);
      await waitUntil("a refused apply attempt", () => f.gatekeeper.refusedReady > refused);
      assert.equal((await projected(f.store, ws, id)).status, ActionStatus.ACTION_STATUS_APPROVED);
      assert.deepEqual(await removeBinding(ws), [id]);
    } finally {
      f.gatekeeper.unreachable = false;
    }
    assert.deepEqual(await outcome(e, ws, id), {
      actionId: id,
      status: "rejected",
      reason: REMOVAL_REASON,
      cascaded: [],
    });
    assert.equal(f.gatekeeper.appliesOf(ws, id), 0, "no apply reached the gatekeeper");
    assert.deepEqual(await eventTypesOf(f.store, ws, id), [
      "ActionSubmitted",
      "ActionApproved",
      "ActionRejected",
    ]);
    const a = await projected(f.store, ws, id);
    assert.deepEqual([a.decidedBy, a.reason], ["user:owner", REMOVAL_REASON]);
  });

  test("an approved action of a removed grant is never applied through the binding introduced again under its name", async () => {
    const ws = uniqueId("w");
    await seedWorkspace(f.store, ws);
    const id = await submit(f.streams, ws, "a1");
    f.gatekeeper.unreachable = true;
    try {
      const refused = f.gatekeeper.refusedReady;
      await approve(e, ws, [id]);
      await waitUntil("a refused apply attempt", () => f.gatekeeper.refusedReady > refused);
      await removeBinding(ws);
      await seedBindingAgain(ws);
    } finally {
      f.gatekeeper.unreachable = false;
    }
    assert.equal((await outcome(e, ws, id)).status, "rejected");
    // The new grant's own action applies normally (through the same binding's run).
    const fresh = await submit(f.streams, ws, "a1");
    await approve(e, ws, [fresh]);
    assert.equal((await outcome(e, ws, fresh)).status, "applied");
    assert.equal(f.gatekeeper.appliesOf(ws, fresh), 1);
    assert.equal(f.gatekeeper.appliesOf(ws, id), 0);
  });

  async function seedBindingAgain(ws: string): Promise<void> {
    const { ResourceIntroduced } = await import("@gatehouse/proto");
    await f.store.append(
      `workspace-${ws}`,
      [
        {
          type: "ResourceIntroduced",
          data: ResourceIntroduced.toJSON({
            binding: "MEM",
            url: "mcp+stdio://mem",
            gatekeeper: "mcp",
            trust: "vetted",
            dts: "",
            methods: [],
            actionKinds: undefined,
          }),
          metadata: { actor: "user:alice" },
        },
      ],
      "any",
    );
  }
});
