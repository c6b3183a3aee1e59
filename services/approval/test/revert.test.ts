/**
 * RequestRevert: real gRPC, a real SQLite store, a real Temporal dev server and the real lifecycle
 * worker process; the gatekeeper is the RecordingGatekeeper (FAKE, see recording-gatekeeper.ts),
 * configured per test to stage a revert or to refuse one.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import {
  type ActionRecord,
  ActionStatus,
  type DecisionResponse,
  type RequestRevertResponse,
} from "@gatehouse/proto";
import { status } from "@grpc/grpc-js";
import { call, description, type Harness, type Stack, startHarness, startStack } from "./harness.ts";
import { rejects, revision, submit } from "./suite-helpers.ts";

let stack: Stack;
before(async () => {
  stack = await startStack();
});
after(async () => {
  await stack?.close();
});

/** Submits and approves one MEM action; resolves once it is applied. */
async function appliedAction(h: Harness, localId: string): Promise<number> {
  const id = await submit(h, "MEM", localId);
  const res = await call<unknown, DecisionResponse>(h.decisions, "approve", {
    workspaceId: h.ws,
    actionId: id,
    decidedBy: "user:alice",
  });
  assert.equal(res.actions.find((a) => a.id === id)?.status, ActionStatus.ACTION_STATUS_APPLIED);
  return id;
}

const requestRevert = (h: Harness, actionId: number, requestedBy = "user:bob") =>
  call<unknown, RequestRevertResponse>(h.decisions, "requestRevert", {
    workspaceId: h.ws,
    actionId,
    requestedBy,
  });

test("a revert of an applied action is staged by its gatekeeper, submitted pending with one append, and applied once approved", async () => {
  const h = await startHarness(stack);
  try {
    const id = await appliedAction(h, "a");
    h.gatekeeper.answerRevert(h.ws, id, {
      localId: "revert-of-a",
      description: description({ title: "Delete entities created by action a" }),
      payloadJson: JSON.stringify({ tool: "delete_entities" }),
    });
    const before = await revision(h);
    const { revert } = await requestRevert(h, id);
    // The gatekeeper was asked with what it needs: the binding's resource, the original's local id,
    // payload and apply result.
    const [asked] = h.gatekeeper.revertsPreparedIn(h.ws);
    assert.deepEqual(
      {
        binding: asked?.binding,
        url: asked?.url,
        trust: asked?.trust,
        actionId: asked?.actionId,
        localId: asked?.localId,
        payloadJson: asked?.payloadJson,
        resultJson: asked?.resultJson,
      },
      {
        binding: "MEM",
        url: "mcp+stdio://mem",
        trust: "vetted",
        actionId: id,
        localId: "a",
        payloadJson: JSON.stringify({ tool: "create_entities" }),
        resultJson: JSON.stringify({ applied: id }),
      },
    );
    assert.ok(revert);
    assert.equal(revert.id, before + 1);
    assert.equal(
      revert.status,
      ActionStatus.ACTION_STATUS_PENDING,
      "a revert needs an approval like any action",
    );
    assert.equal(revert.binding, "MEM");
    assert.equal(revert.localId, "revert-of-a");
    assert.equal(revert.description?.implementsRevert, id);
    assert.equal(revert.description?.title, "Delete entities created by action a");
    assert.deepEqual(revert.caller, { kind: "user", id: "bob" });
    // ActionSubmitted + ActionReverted, in one append (consecutive revisions, nothing else).
    const events = await h.store.readStream(`workspace-${h.ws}`, { fromRevision: before + 1 });
    assert.deepEqual(
      events.map((e) => e.type),
      ["ActionSubmitted", "ActionReverted"],
    );
    assert.deepEqual(events[1]?.data, { actionId: id, revertActionId: revert.id, requestedBy: "user:bob" });
    assert.equal(events[1]?.metadata.actor, "user:bob");
    // It is decided and applied like a submitted action (its binding's run applies it once approved).
    assert.equal(h.gatekeeper.appliedIn(h.ws).length, 1, "nothing applied before approval");
    const res = await call<unknown, DecisionResponse>(h.decisions, "approve", {
      workspaceId: h.ws,
      actionId: revert.id,
      decidedBy: "user:alice",
    });
    assert.equal(res.actions.find((a) => a.id === revert.id)?.status, ActionStatus.ACTION_STATUS_APPLIED);
    const applied = h.gatekeeper.appliedIn(h.ws);
    assert.equal(applied.length, 2);
    assert.equal(applied[1]?.localId, "revert-of-a");
    assert.equal(applied[1]?.payloadJson, JSON.stringify({ tool: "delete_entities" }));
  } finally {
    await h.close();
  }
});

test("a revert of an action that is not applied is FAILED_PRECONDITION; the gatekeeper is not asked and nothing is appended", async () => {
  const h = await startHarness(stack);
  try {
    const pending = await submit(h, "MEM", "p");
    const before = await revision(h);
    await rejects(
      requestRevert(h, pending),
      status.FAILED_PRECONDITION,
      new RegExp(`^action ${pending} cannot be reverted: it is still pending.*reject it instead`),
    );
    await call(h.decisions, "reject", {
      workspaceId: h.ws,
      actionId: pending,
      decidedBy: "user:a",
      reason: "no",
    });
    await rejects(requestRevert(h, pending), status.FAILED_PRECONDITION, /it was rejected/);
    await rejects(requestRevert(h, 999), status.NOT_FOUND, /no action 999/);
    await rejects(requestRevert(h, pending, ""), status.INVALID_ARGUMENT, /^requested_by: /);
    assert.equal(await revision(h), before + 1, "only the rejection was appended");
    assert.equal(h.gatekeeper.revertsPreparedIn(h.ws).length, 0);
  } finally {
    await h.close();
  }
});

test("a second revert while the first exists is FAILED_PRECONDITION naming the revert action", async () => {
  const h = await startHarness(stack);
  try {
    const id = await appliedAction(h, "a");
    h.gatekeeper.answerRevert(h.ws, id, {
      localId: "r1",
      description: description({ title: "Undo a" }),
      payloadJson: "{}",
    });
    const { revert } = await requestRevert(h, id);
    const before = await revision(h);
    await rejects(
      requestRevert(h, id, "user:carol"),
      status.FAILED_PRECONDITION,
      new RegExp(
        `^action ${id} cannot be reverted: it was already reverted by action ${revert?.id}, which is pending`,
      ),
    );
    assert.equal(await revision(h), before);
    assert.equal(h.gatekeeper.revertsPreparedIn(h.ws).length, 1, "the gatekeeper was asked once");
  } finally {
    await h.close();
  }
});

test("a gatekeeper that cannot revert: its reason is passed through as FAILED_PRECONDITION and nothing is appended", async () => {
  const h = await startHarness(stack);
  try {
    const id = await appliedAction(h, "a");
    h.gatekeeper.answerRevert(h.ws, id, {
      code: status.FAILED_PRECONDITION,
      details: "the commit was already pushed; revert it on the remote",
    });
    const before = await revision(h);
    const err = await rejects(requestRevert(h, id), status.FAILED_PRECONDITION);
    assert.match(
      err.details,
      new RegExp(
        `^action ${id} cannot be reverted through binding "MEM": gatekeeper "mcp" answered FAILED_PRECONDITION: the commit was already pushed; revert it on the remote; nothing was appended$`,
      ),
    );
    assert.equal(await revision(h), before);
    const actions = await call<unknown, { actions: ActionRecord[] }>(h.decisions, "listActions", {
      workspaceId: h.ws,
      pendingOnly: true,
    });
    assert.equal(actions.actions.length, 0);
  } finally {
    await h.close();
  }
});

test("a gatekeeper kind without an address is UNAVAILABLE naming GATEKEEPER_ADDRESSES, and nothing is appended", async () => {
  const h = await startHarness(stack, { service: { gatekeepers: {} } });
  try {
    const id = await appliedAction(h, "a");
    const before = await revision(h);
    await rejects(
      requestRevert(h, id),
      status.UNAVAILABLE,
      /no address configured for gatekeeper kind "mcp"; add mcp=host:port to GATEKEEPER_ADDRESSES/,
    );
    assert.equal(await revision(h), before);
  } finally {
    await h.close();
  }
});
