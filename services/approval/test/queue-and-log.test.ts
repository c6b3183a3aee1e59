/**
 * Gatekeeper calls, recovery and the read side: The approval service on the Temporal engine: real gRPC, a real SQLite store, a real Temporal dev
 * server and the real lifecycle worker process (see harness.ts). Each test has its own workspace.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { bindingRunWorkflowId } from "@gatehouse/approval-core/lifecycle-contract";
import { mintCallerToken } from "@gatehouse/caller-token";
import { openSqliteEventStore } from "@gatehouse/event-store";
import {
  ActionApplying,
  ActionApproved,
  type ActionRecord,
  ActionStatus,
  ActionSubmitted,
  type LogChange,
  LogView,
} from "@gatehouse/proto";
import { status } from "@grpc/grpc-js";
import { Client, Connection, WorkflowNotFoundError } from "@temporalio/client";
import {
  call,
  description,
  eventually,
  newWorkspaceId,
  type Stack,
  seedWorkspace,
  startHarness,
  startStack,
} from "./harness.ts";
import { rejects, revision, submit } from "./suite-helpers.ts";

let stack: Stack;
before(async () => {
  stack = await startStack();
});
after(async () => {
  await stack?.close();
});

test("a forged caller token is refused with UNAUTHENTICATED and nothing is appended", async () => {
  const h = await startHarness(stack);
  try {
    const before = await revision(h);
    const forged = mintCallerToken("another-secret-another-secret-0123456", {
      workspaceId: h.ws,
      binding: "MEM",
      caller: { kind: "agent", id: "x" },
      executionId: "e",
    });
    await rejects(
      call(h.queue, "submitAction", {
        callerToken: forged,
        localId: "a",
        description: description(),
        payloadJson: "{}",
      }),
      status.UNAUTHENTICATED,
      /caller_token: .*signature/,
    );
    assert.equal(await revision(h), before);
  } finally {
    await h.close();
  }
});

// Since the move to Temporal, settling a claim is the worker's apply activity's job (an unmatched
// claim becomes "outcome unknown"); this service's part is to start the workflow of every open
// action at start-up. Killing the worker itself mid-apply is in worker-crash.test.ts.

test("a claim left by a crashed process becomes outcome unknown once start-up recovery gives it a workflow, without an apply call", async () => {
  const ws = newWorkspaceId();
  const store = openSqliteEventStore(stack.eventsPath);
  try {
    await seedWorkspace(store, ws, ["MEM"]);
    const rev = await store.streamRevision(`workspace-${ws}`);
    const a = rev + 1;
    const desc = description();
    const submitted = (localId: string, dependsOn: number[]) => ({
      type: "ActionSubmitted",
      data: ActionSubmitted.toJSON({
        binding: "MEM",
        localId,
        description: desc,
        dependsOn,
        payloadJson: "{}",
        executionId: "e",
      }),
    });
    await store.append(
      `workspace-${ws}`,
      [
        submitted("a", []),
        submitted("b", [a]),
        {
          type: "ActionApproved",
          data: ActionApproved.toJSON({ actionId: a, decidedBy: "user:alice", descriptionDigest: "" }),
        },
        { type: "ActionApplying", data: ActionApplying.toJSON({ actionId: a, claimedBy: "dead-instance" }) },
      ],
      rev,
    );
  } finally {
    await store.close();
  }
  const h = await startHarness(stack, { ws });
  try {
    const a = (await h.revision()) - 3;
    const get = (id: number) =>
      call<unknown, ActionRecord>(h.decisions, "getAction", { workspaceId: ws, actionId: id });
    assert.ok(
      await eventually(async () => (await get(a)).status === ActionStatus.ACTION_STATUS_FAILED),
      "the worker should settle the claim",
    );
    const rec = await get(a);
    assert.equal(rec.outcomeUnknown, true);
    assert.match(rec.reason, /outcome is unknown/);
    assert.equal((await get(a + 1)).cascadedFrom, a);
    assert.equal(h.gatekeeper.appliedIn(ws).length, 0);
  } finally {
    await h.close();
  }
});

test("Replay up to a revision serializes byte-identically to the live GetLog at that revision", async () => {
  const h = await startHarness(stack);
  try {
    const a = await submit(h, "MEM", "a");
    await call(h.queue, "authorizeObservation", {
      callerToken: h.token("MEM"),
      description: {
        title: "Read graph",
        description: "",
        containsRestrictedData: false,
        kind: "mcp.tool.read_graph",
        page: 0,
      },
    });
    await submit(h, "MEM", "b", ["a"]);
    await call(h.decisions, "setAutoApprovalRule", {
      workspaceId: h.ws,
      binding: "GIT",
      actionKindTag: "git.commit",
      enabled: true,
      setBy: "user:alice",
    });
    const early = await call<unknown, LogView>(h.decisions, "getLog", { workspaceId: h.ws });
    await call(h.decisions, "reject", {
      workspaceId: h.ws,
      actionId: a,
      decidedBy: "user:alice",
      reason: "no",
    });
    const live = await call<unknown, LogView>(h.decisions, "getLog", { workspaceId: h.ws });
    const replayAll = await call<unknown, LogView>(h.decisions, "replay", {
      workspaceId: h.ws,
      untilRevision: live.revision,
    });
    assert.deepEqual(
      Buffer.from(LogView.encode(replayAll).finish()),
      Buffer.from(LogView.encode(live).finish()),
    );
    const replayEarly = await call<unknown, LogView>(h.decisions, "replay", {
      workspaceId: h.ws,
      untilRevision: early.revision,
    });
    assert.deepEqual(
      Buffer.from(LogView.encode(replayEarly).finish()),
      Buffer.from(LogView.encode(early).finish()),
    );
    assert.notDeepEqual(
      Buffer.from(LogView.encode(early).finish()),
      Buffer.from(LogView.encode(live).finish()),
    );
    assert.deepEqual(
      live.entries.map((e) => e.entry?.$case),
      ["action", "observation", "action"],
    );
  } finally {
    await h.close();
  }
});

/** Records an observation of `binding` carrying restricted data (latches the workspace). */
async function readRestricted(h: Awaited<ReturnType<typeof startHarness>>, binding: string): Promise<void> {
  await call(h.queue, "authorizeObservation", {
    callerToken: h.token(binding),
    description: {
      title: "Read HR",
      description: "",
      containsRestrictedData: true,
      kind: "mcp.tool.read",
      page: 0,
    },
  });
}

test("after restricted data is read, writes to other bindings are refused and recorded as refusals, never staged", async () => {
  const h = await startHarness(stack);
  try {
    const git = await submit(h, "GIT", "g1");
    await readRestricted(h, "MEM");
    const before = await revision(h);
    await rejects(
      call(h.queue, "submitAction", {
        callerToken: h.token("GIT"),
        localId: "g2",
        description: description(),
        payloadJson: "{}",
      }),
      status.FAILED_PRECONDITION,
      /binding "GIT".*latched/,
    );
    assert.equal(await revision(h), before + 1, "one ActionRefused, nothing else");
    const [refusal] = await h.store.readStream(`workspace-${h.ws}`, { fromRevision: before + 1 });
    assert.equal(refusal?.type, "ActionRefused");
    await rejects(
      call(h.decisions, "approve", { workspaceId: h.ws, actionId: git, decidedBy: "user:alice" }),
      status.FAILED_PRECONDITION,
      /latched/,
    );
    assert.equal(await revision(h), before + 1, "a refused approval appends nothing");
    assert.equal(h.gatekeeper.appliedIn(h.ws).length, 0);
    await submit(h, "MEM", "m1"); // the binding that read it may still write
    const log = await call<unknown, LogView>(h.decisions, "getLog", { workspaceId: h.ws });
    assert.equal(log.latched, true);
    const actions = await call<unknown, { actions: ActionRecord[] }>(h.decisions, "listActions", {
      workspaceId: h.ws,
      pendingOnly: true,
    });
    assert.deepEqual(
      actions.actions.map((a) => a.localId),
      ["g1", "m1"],
      "a refusal is never a pending action",
    );
  } finally {
    await h.close();
  }
});

test("after the latch an egress write is refused even on the latched binding; the refusal shows in GetLog and Replay alike", async () => {
  const h = await startHarness(stack);
  try {
    const early = await submit(h, "MEM", "push-early", [], { egress: true, title: "git push main" });
    await readRestricted(h, "MEM");
    const before = await revision(h);
    const err = await rejects(
      call(h.queue, "submitAction", {
        callerToken: h.token("MEM"),
        localId: "push-1",
        description: description({ egress: true, title: "git push main" }),
        payloadJson: JSON.stringify({ ref: "main" }),
      }),
      status.FAILED_PRECONDITION,
      /binding "MEM": the workspace read restricted data through "MEM" and is latched; writes that send data out of the workspace \(egress, e\.g\. git push\) are refused on every binding.*start a new workspace/,
    );
    // Approving the egress write submitted before the latch is refused too (a plain error).
    await rejects(
      call(h.decisions, "approve", { workspaceId: h.ws, actionId: early, decidedBy: "user:alice" }),
      status.FAILED_PRECONDITION,
      new RegExp(`^action ${early} \\(binding "MEM"\\): .*egress`),
    );
    assert.equal(h.gatekeeper.appliedIn(h.ws).length, 0);
    // An ordinary write of the latched binding is still held for approval.
    const ok = await submit(h, "MEM", "m1");
    const live = await call<unknown, LogView>(h.decisions, "getLog", { workspaceId: h.ws });
    const entry = live.entries.find((e) => e.id === before + 1);
    assert.ok(entry?.entry?.$case === "refusal", `expected a refusal at ${before + 1}`);
    const refusal = entry.entry.refusal;
    assert.equal(refusal.binding, "MEM");
    assert.equal(refusal.localId, "push-1");
    assert.equal(refusal.description?.title, "git push main");
    assert.equal(refusal.description?.egress, true);
    assert.equal(refusal.reason, err.details);
    assert.deepEqual(refusal.caller, { kind: "agent", id: "chat-1" });
    assert.equal(refusal.executionId, "exec-1");
    assert.deepEqual(
      live.entries.map((e) => e.entry?.$case),
      ["action", "observation", "refusal", "action"],
    );
    assert.equal(live.entries.at(-1)?.id, ok);
    const replay = await call<unknown, LogView>(h.decisions, "replay", { workspaceId: h.ws });
    assert.deepEqual(
      Buffer.from(LogView.encode(replay).finish()),
      Buffer.from(LogView.encode(live).finish()),
      "the replayed log equals the live one byte for byte",
    );
    const asOfRefusal = await call<unknown, LogView>(h.decisions, "replay", {
      workspaceId: h.ws,
      untilRevision: before + 1,
    });
    assert.equal(asOfRefusal.entries.at(-1)?.entry?.$case, "refusal");
  } finally {
    await h.close();
  }
});

test("an unknown workspace or action is NOT_FOUND with a message naming it", async () => {
  const h = await startHarness(stack);
  try {
    await rejects(
      call(h.decisions, "getLog", { workspaceId: "nope" }),
      status.NOT_FOUND,
      /workspace "nope" does not exist/,
    );
    await rejects(
      call(h.decisions, "approve", { workspaceId: "nope", actionId: 3, decidedBy: "user:alice" }),
      status.NOT_FOUND,
      /workspace "nope"/,
    );
    await rejects(
      call(h.decisions, "approve", { workspaceId: h.ws, actionId: 99, decidedBy: "user:alice" }),
      status.NOT_FOUND,
      /no action 99/,
    );
    await rejects(
      call(h.queue, "submitAction", {
        callerToken: h.token("MEM", "ghost"),
        localId: "a",
        description: description(),
        payloadJson: "{}",
      }),
      status.NOT_FOUND,
      /workspace "ghost"/,
    );
  } finally {
    await h.close();
  }
});

test("GetActionForCaller returns only actions of the token's binding", async () => {
  const h = await startHarness(stack);
  try {
    const id = await submit(h, "MEM", "a");
    const rec = await call<unknown, ActionRecord>(h.queue, "getActionForCaller", {
      callerToken: h.token("MEM"),
      actionId: id,
    });
    assert.equal(rec.localId, "a");
    const foreign = await rejects(
      call(h.queue, "getActionForCaller", { callerToken: h.token("GIT"), actionId: id }),
      status.NOT_FOUND,
      /is not an action of binding GIT/,
    );
    // An id that does not exist gets the same answer, so an agent cannot probe which ids exist.
    const missing = await rejects(
      call(h.queue, "getActionForCaller", { callerToken: h.token("GIT"), actionId: id + 1000 }),
      status.NOT_FOUND,
      /is not an action of binding GIT/,
    );
    assert.equal(missing.details.replace(String(id + 1000), "N"), foreign.details.replace(String(id), "N"));
  } finally {
    await h.close();
  }
});

test("ListUnappliedForCaller: the binding's open writes in submission order with payloads, and every local id it used", async () => {
  const h = await startHarness(stack);
  try {
    const a = await submit(h, "MEM", "a");
    const b = await submit(h, "MEM", "b", ["a"]);
    await submit(h, "GIT", "g");
    const c = await submit(h, "MEM", "c");
    await call(h.decisions, "reject", {
      workspaceId: h.ws,
      actionId: c,
      decidedBy: "user:alice",
      reason: "no",
    });
    const res = await call<
      unknown,
      { actions: { action: ActionRecord; payloadJson: string }[]; usedLocalIds: string[] }
    >(h.queue, "listUnappliedForCaller", { callerToken: h.token("MEM") });
    assert.deepEqual(
      res.actions.map((u) => [u.action.id, u.action.localId, u.action.dependsOn]),
      [
        [a, "a", []],
        [b, "b", [a]],
      ],
      "another binding's write and the rejected one are left out",
    );
    assert.ok(res.actions.every((u) => typeof u.payloadJson === "string" && u.payloadJson !== ""));
    assert.deepEqual([...res.usedLocalIds].sort(), ["a", "b", "c"]);
  } finally {
    await h.close();
  }
});

test("ListUnappliedForCaller: what each applied provisional id of the binding became (its result), and no other ids", async () => {
  const h = await startHarness(stack);
  try {
    const one = await submit(h, "MEM", "~1");
    await submit(h, "MEM", "~2");
    const named = await submit(h, "MEM", "named");
    const other = await submit(h, "GIT", "~1");
    for (const actionId of [one, named, other]) {
      await call(h.decisions, "approve", { workspaceId: h.ws, actionId, decidedBy: "user:alice" });
    }
    await eventually(() => h.gatekeeper.appliedIn(h.ws).length === 3);
    const res = await call<unknown, { actions: { action: ActionRecord }[]; applied: unknown[] }>(
      h.queue,
      "listUnappliedForCaller",
      { callerToken: h.token("MEM") },
    );
    assert.deepEqual(
      res.applied,
      [{ localId: "~1", resultJson: JSON.stringify({ applied: one }) }],
      "the pending ~2, the non-provisional id and another binding's ~1 are left out",
    );
    assert.deepEqual(
      res.actions.map((u) => u.action.localId),
      ["~2"],
    );
  } finally {
    await h.close();
  }
});

test("WatchLog delivers the catch-up and then live changes", async () => {
  const h = await startHarness(stack);
  try {
    const a = await submit(h, "MEM", "a");
    const changes: LogChange[] = [];
    const stream = h.decisions.watchLog({ workspaceId: h.ws, fromRevision: a });
    stream.on("data", (c: LogChange) => changes.push(c));
    stream.on("error", () => undefined);
    await call(h.decisions, "approve", { workspaceId: h.ws, actionId: a, decidedBy: "user:alice" });
    await eventually(() => changes.length >= 4);
    stream.cancel();
    assert.deepEqual(
      changes.map((c) => c.type),
      ["ActionSubmitted", "ActionApproved", "ActionApplying", "ActionApplied"],
    );
    const last = changes.at(-1)?.entry?.entry;
    assert.equal(last?.$case === "action" && last.action.status, ActionStatus.ACTION_STATUS_APPLIED);
  } finally {
    await h.close();
  }
});

test("WatchLog of a workspace that does not exist ends with NOT_FOUND instead of hanging", {
  timeout: 120_000,
}, async () => {
  const h = await startHarness(stack);
  try {
    const stream = h.decisions.watchLog({ workspaceId: "no-such-workspace", fromRevision: 0 });
    stream.on("data", () => undefined);
    const err = await new Promise<Error & { code?: number }>((resolve) => stream.on("error", resolve));
    assert.equal(err.code, status.NOT_FOUND, err.message);
    assert.match(err.message, /no-such-workspace/);
  } finally {
    await h.close();
  }
});

test("Verify reports an intact hash chain for a workspace stream", async () => {
  const h = await startHarness(stack);
  try {
    await submit(h, "MEM", "a");
    const res = await call<unknown, { ok: boolean; eventsChecked: number; firstBadRevision: number }>(
      h.decisions,
      "verify",
      { workspaceId: h.ws },
    );
    assert.equal(res.ok, true);
    assert.equal(res.eventsChecked, (await revision(h)) + 1);
    assert.equal(res.firstBadRevision, -1);
  } finally {
    await h.close();
  }
});

test("start-up recovery wakes the binding run of an approved action left without one, and it is applied", async () => {
  const ws = newWorkspaceId();
  const store = openSqliteEventStore(stack.eventsPath);
  let a: number;
  try {
    await seedWorkspace(store, ws, ["MEM"]);
    const rev = await store.streamRevision(`workspace-${ws}`);
    a = rev + 1;
    await store.append(
      `workspace-${ws}`,
      [
        {
          type: "ActionSubmitted",
          data: ActionSubmitted.toJSON({
            binding: "MEM",
            localId: "a",
            description: description(),
            dependsOn: [],
            payloadJson: "{}",
            executionId: "e",
          }),
        },
        { type: "ActionApproved", data: { actionId: rev + 1, decidedBy: "user:alice" } },
      ],
      rev,
    );
  } finally {
    await store.close();
  }
  const connection = await Connection.connect({ address: stack.temporal.address });
  const handle = new Client({ connection }).workflow.getHandle(bindingRunWorkflowId(ws, "MEM"));
  try {
    await assert.rejects(handle.describe(), WorkflowNotFoundError);
    const h = await startHarness(stack, { ws });
    try {
      assert.ok((await handle.describe()).status.name, "recovery started the binding's run");
      const applied = await eventually(
        async () =>
          (await call<unknown, ActionRecord>(h.decisions, "getAction", { workspaceId: ws, actionId: a }))
            .status === ActionStatus.ACTION_STATUS_APPLIED,
      );
      assert.ok(applied, "the approved action is applied by its binding's run");
      assert.equal(h.gatekeeper.appliedIn(ws).length, 1);
    } finally {
      await h.close();
    }
  } finally {
    await connection.close();
  }
});
