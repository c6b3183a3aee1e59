/**
 * Revocation and the action lifecycle on a real Temporal dev server with a real SQLite store: what
 * Kernel.RemoveBinding does (the RemoveBinding decision, one append, then the cascade signal to each
 * rejected action's workflow) ends the workflows rejected "binding removed", and an approval that
 * raced the removal is refused at apply — no call reaches the gatekeeper (a RecordingGatekeeper).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { decide, REMOVAL_REASON } from "@gatehouse/approval-core";
import {
  actionStatusQuery,
  actionWorkflowId,
  cascadedSignal,
  decideUpdate,
} from "@gatehouse/approval-core/lifecycle-contract";
import { ActionStatus } from "@gatehouse/proto";
import { waitUntil } from "@gatehouse/service-kit";
import { eventTypesOf, messagesOf, projected } from "./support/assertions.ts";
import { startAction, uniqueId } from "./support/driver.ts";
import { type Fixture, startFixture } from "./support/fixture.ts";
import { seedWorkspace, submit } from "./support/workspace.ts";

describe("removing a binding ends its actions' lifecycles", () => {
  let f: Fixture;
  before(async () => {
    f = await startFixture();
  });
  after(async () => {
    await f?.close();
  });

  /** What Kernel.RemoveBinding does: decide and append, then wake each root-rejected action's workflow. */
  async function removeBinding(ws: string, binding = "MEM"): Promise<number[]> {
    const { events } = await f.streams.execute(ws, (s) =>
      decide({ type: "RemoveBinding", binding, removedBy: "user:owner", reason: "" }, s),
    );
    const rejected = events.slice(1).map((e) => e.data as { actionId: number; cascadedFrom: number });
    const roots = rejected.filter((r) => !r.cascadedFrom).map((r) => r.actionId); // 0 is left out of the JSON
    for (const id of roots) {
      await f.env.client.workflow
        .getHandle(actionWorkflowId(ws, id))
        .signal(cascadedSignal, { cascadedFrom: 0 });
    }
    return rejected.map((r) => r.actionId);
  }

  test("a pending action's workflow ends rejected 'binding removed' and propagates it: its dependent ends by cascade, the gatekeeper hears of both", async () => {
    const ws = uniqueId("w");
    await seedWorkspace(f.store, ws);
    const a = await submit(f.streams, ws, "a1");
    const b = await submit(f.streams, ws, "b1", { dependsOn: ["a1"] });
    const ha = await startAction(f.env.client, ws, a);
    const hb = await startAction(f.env.client, ws, b);
    // Both wait for a decision (an action whose workflow starts after the removal just ends rejected).
    for (const h of [ha, hb])
      await waitUntil("its workflow waits", async () => (await h.query(actionStatusQuery)) === "waiting");
    assert.deepEqual(await removeBinding(ws), [a, b]);
    assert.deepEqual(await ha.result(), {
      actionId: a,
      status: "rejected",
      reason: REMOVAL_REASON,
      cascaded: [b],
    });
    assert.deepEqual(await hb.result(), {
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

  test("an approval racing the removal is refused at apply: the action ends rejected and no call reaches the gatekeeper", async () => {
    const ws = uniqueId("w");
    await seedWorkspace(f.store, ws);
    const id = await submit(f.streams, ws, "a1");
    const handle = await startAction(f.env.client, ws, id);
    // The gatekeeper is down: the approved action's apply is retried without a claim.
    f.gatekeeper.unreachable = true;
    let outcome: Promise<unknown>;
    try {
      outcome = handle.executeUpdate(decideUpdate, { args: [{ kind: "approve", decidedBy: "user:alice" }] });
      outcome.catch(() => undefined);
      await waitUntil(
        "the approval is recorded",
        async () => (await projected(f.store, ws, id)).status === ActionStatus.ACTION_STATUS_APPROVED,
      );
      assert.deepEqual(await removeBinding(ws), [id]);
    } finally {
      f.gatekeeper.unreachable = false;
    }
    assert.deepEqual(await outcome, {
      actionId: id,
      status: "rejected",
      reason: REMOVAL_REASON,
      cascaded: [],
    });
    assert.deepEqual(await handle.result(), {
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
    const handle = await startAction(f.env.client, ws, id);
    f.gatekeeper.unreachable = true;
    let outcome: Promise<unknown>;
    try {
      outcome = handle.executeUpdate(decideUpdate, { args: [{ kind: "approve", decidedBy: "user:alice" }] });
      outcome.catch(() => undefined);
      await waitUntil(
        "the approval is recorded",
        async () => (await projected(f.store, ws, id)).status === ActionStatus.ACTION_STATUS_APPROVED,
      );
      await removeBinding(ws);
      await seedBindingAgain(ws);
    } finally {
      f.gatekeeper.unreachable = false;
    }
    assert.equal(((await outcome) as { status: string }).status, "rejected");
    assert.equal(f.gatekeeper.appliesOf(ws, id), 0);
    // The new grant's own action applies normally.
    const fresh = await submit(f.streams, ws, "a1");
    const h2 = await startAction(f.env.client, ws, fresh);
    const applied = await h2.executeUpdate(decideUpdate, {
      args: [{ kind: "approve", decidedBy: "user:alice" }],
    });
    assert.equal(applied.status, "applied", messagesOf(applied));
    assert.equal(f.gatekeeper.appliesOf(ws, fresh), 1);
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
