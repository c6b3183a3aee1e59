/**
 * The approval service on the Temporal engine: real gRPC, a real SQLite store, a real Temporal dev
 * server and the real lifecycle worker process (see harness.ts). Each test has its own workspace.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { actionWorkflowId } from "@gatehouse/approval-core/lifecycle-contract";
import { mintCallerToken } from "@gatehouse/caller-token";
import { openSqliteEventStore } from "@gatehouse/event-store";
import {
  ActionApplying,
  ActionApproved,
  type ActionRecord,
  ActionStatus,
  ActionSubmitted,
  type DecisionResponse,
  type LogChange,
  LogView,
  type SubmitActionResponse,
} from "@gatehouse/proto";
import { type ServiceError, status } from "@grpc/grpc-js";
import { Client, Connection, WorkflowNotFoundError } from "@temporalio/client";
import {
  call,
  description,
  eventually,
  type Harness,
  newWorkspaceId,
  type Stack,
  seedWorkspace,
  startHarness,
  startStack,
} from "./harness.ts";

let stack: Stack;
before(async () => {
  stack = await startStack();
});
after(async () => {
  await stack?.close();
});

async function submit(
  h: Harness,
  binding: string,
  localId: string,
  dependsOn: string[] = [],
  over = {},
): Promise<number> {
  const res = await call<unknown, SubmitActionResponse>(h.queue, "submitAction", {
    callerToken: h.token(binding),
    localId,
    description: description({ dependsOn, ...over }),
    payloadJson: JSON.stringify({ tool: "create_entities" }),
  });
  return res.actionId;
}

async function rejects(p: Promise<unknown>, code: status, message?: RegExp): Promise<ServiceError> {
  const err = (await p.then(
    () => assert.fail("expected the call to fail"),
    (e: ServiceError) => e,
  )) as ServiceError;
  assert.equal(err.code, code, `expected ${status[code]}, got ${status[err.code]}: ${err.details}`);
  if (message) assert.match(err.details, message);
  return err;
}

const revision = (h: Harness) => h.revision();

test("two concurrent approvals of one action apply it exactly once and the loser gets a clear ABORTED", async () => {
  const h = await startHarness(stack);
  try {
    const id = await submit(h, "MEM", "a");
    h.gatekeeper.delayMs = 50;
    const results = await Promise.allSettled([
      call<unknown, DecisionResponse>(h.decisions, "approve", {
        workspaceId: h.ws,
        actionId: id,
        decidedBy: "user:alice",
      }),
      call<unknown, DecisionResponse>(h.decisions, "approve", {
        workspaceId: h.ws,
        actionId: id,
        decidedBy: "user:bob",
      }),
    ]);
    assert.equal(h.gatekeeper.appliedIn(h.ws).length, 1);
    const ok = results.filter((r) => r.status === "fulfilled");
    const lost = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    assert.equal(ok.length, 1);
    assert.equal(lost.length, 1);
    const err = lost[0]!.reason as ServiceError;
    assert.equal(err.code, status.ABORTED);
    assert.match(err.details, new RegExp(`action ${id} was already approved by user:(alice|bob)`));
    const rec = (ok[0] as PromiseFulfilledResult<DecisionResponse>).value.actions.find((a) => a.id === id);
    assert.equal(rec?.status, ActionStatus.ACTION_STATUS_APPLIED);
    assert.equal(h.gatekeeper.appliedIn(h.ws)[0]?.payloadJson, JSON.stringify({ tool: "create_entities" }));
    assert.equal(h.gatekeeper.appliedIn(h.ws)[0]?.localId, "a");
    assert.equal(h.gatekeeper.appliedIn(h.ws)[0]?.url, "mcp+stdio://mem");
  } finally {
    await h.close();
  }
});

test("two approval processes racing on one action apply it exactly once: the workflow takes one decision", async () => {
  const h1 = await startHarness(stack);
  const h2 = await startHarness(stack, { ws: h1.ws });
  try {
    const id = await submit(h1, "MEM", "a");
    h1.gatekeeper.delayMs = 30;
    const results = await Promise.allSettled([
      call(h1.decisions, "approve", { workspaceId: h1.ws, actionId: id, decidedBy: "user:alice" }),
      call(h2.decisions, "approve", { workspaceId: h1.ws, actionId: id, decidedBy: "user:bob" }),
    ]);
    assert.equal(h1.gatekeeper.appliedIn(h1.ws).length, 1);
    assert.equal(results.filter((r) => r.status === "fulfilled").length, 1);
    const lost = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
    assert.ok(lost, "one approval must lose");
    assert.equal((lost.reason as ServiceError).code, status.ABORTED);
    assert.match((lost.reason as ServiceError).details, /already approved by user:/);
  } finally {
    await h2.close();
    await h1.close();
  }
});

test("a reject after approve is refused with FAILED_PRECONDITION and appends nothing", async () => {
  const h = await startHarness(stack);
  try {
    const id = await submit(h, "MEM", "a");
    await call(h.decisions, "approve", { workspaceId: h.ws, actionId: id, decidedBy: "user:bob" });
    const before = await revision(h);
    await rejects(
      call(h.decisions, "reject", {
        workspaceId: h.ws,
        actionId: id,
        decidedBy: "user:alice",
        reason: "too late",
      }),
      status.FAILED_PRECONDITION,
      new RegExp(`action ${id} was already approved by user:bob and applied`),
    );
    assert.equal(await revision(h), before);
  } finally {
    await h.close();
  }
});

test("rejecting an action cascades to its dependents with cascadedFrom and tells the gatekeeper", async () => {
  const h = await startHarness(stack);
  try {
    const a = await submit(h, "MEM", "a");
    const b = await submit(h, "MEM", "b", ["a"]);
    const c = await submit(h, "MEM", "c", ["b"]);
    const res = await call<unknown, DecisionResponse>(h.decisions, "reject", {
      workspaceId: h.ws,
      actionId: a,
      decidedBy: "user:alice",
      reason: "wrong graph",
    });
    const byId = new Map(res.actions.map((r) => [r.id, r]));
    assert.equal(byId.get(a)?.reason, "wrong graph");
    assert.equal(byId.get(b)?.cascadedFrom, a);
    assert.equal(byId.get(b)?.reason, `needed action ${a}, which did not complete`);
    assert.equal(byId.get(c)?.cascadedFrom, b);
    assert.equal(byId.get(c)?.status, ActionStatus.ACTION_STATUS_REJECTED);
    // The worker tells the gatekeeper after the outcome (best effort), so wait for the notices.
    await eventually(() => h.gatekeeper.rejectedIn(h.ws).length >= 3);
    assert.deepEqual(
      h.gatekeeper
        .rejectedIn(h.ws)
        .map((r) => r.localId)
        .sort(),
      ["a", "b", "c"],
    );
    assert.equal(h.gatekeeper.appliedIn(h.ws).length, 0);
  } finally {
    await h.close();
  }
});

test("a failed apply records the gatekeeper's error and cascades to dependents", async () => {
  const h = await startHarness(stack);
  try {
    const a = await submit(h, "MEM", "a");
    const b = await submit(h, "MEM", "b", ["a"]);
    h.gatekeeper.answer(h.ws, a, { ok: false, resultJson: "", error: "tool returned isError" });
    const res = await call<unknown, DecisionResponse>(h.decisions, "approve", {
      workspaceId: h.ws,
      actionId: a,
      decidedBy: "user:alice",
    });
    const byId = new Map(res.actions.map((r) => [r.id, r]));
    assert.equal(byId.get(a)?.status, ActionStatus.ACTION_STATUS_FAILED);
    assert.equal(byId.get(a)?.outcomeUnknown, false);
    assert.equal(byId.get(b)?.cascadedFrom, a);
    assert.match(byId.get(a)?.reason ?? "", /tool returned isError/);
    await eventually(() => h.gatekeeper.rejectedIn(h.ws).length >= 1);
    assert.deepEqual(
      h.gatekeeper.rejectedIn(h.ws).map((r) => r.actionId),
      [b],
    );
  } finally {
    await h.close();
  }
});

test("approving with include_dependencies applies the dependencies first, in submission order", async () => {
  const h = await startHarness(stack);
  try {
    const a = await submit(h, "MEM", "a");
    const b = await submit(h, "MEM", "b", ["a"]);
    await rejects(
      call(h.decisions, "approve", { workspaceId: h.ws, actionId: b, decidedBy: "user:alice" }),
      status.FAILED_PRECONDITION,
      /undecided action\(s\) \d+; .*include_dependencies/,
    );
    await call(h.decisions, "approve", {
      workspaceId: h.ws,
      actionId: b,
      decidedBy: "user:alice",
      includeDependencies: true,
    });
    assert.deepEqual(
      h.gatekeeper.appliedIn(h.ws).map((r) => r.actionId),
      [a, b],
    );
  } finally {
    await h.close();
  }
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
        { type: "ActionApproved", data: ActionApproved.toJSON({ actionId: a, decidedBy: "user:alice" }) },
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
      await eventually(async () => (await get(a)).status === ActionStatus.ACTION_STATUS_FAILED, 30_000),
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

test("after restricted data is read, writes to other bindings are refused and nothing is appended", async () => {
  const h = await startHarness(stack);
  try {
    const git = await submit(h, "GIT", "g1");
    await call(h.queue, "authorizeObservation", {
      callerToken: h.token("MEM"),
      description: {
        title: "Read HR",
        description: "",
        containsRestrictedData: true,
        kind: "mcp.tool.read",
        page: 0,
      },
    });
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
    assert.equal(await revision(h), before);
    await rejects(
      call(h.decisions, "approve", { workspaceId: h.ws, actionId: git, decidedBy: "user:alice" }),
      status.FAILED_PRECONDITION,
      /latched/,
    );
    assert.equal(h.gatekeeper.appliedIn(h.ws).length, 0);
    await submit(h, "MEM", "m1"); // the binding that read it may still write
    const log = await call<unknown, LogView>(h.decisions, "getLog", { workspaceId: h.ws });
    assert.equal(log.latched, true);
  } finally {
    await h.close();
  }
});

test("an auto-approval rule drains in submission order and stops at the first action that needs a person", async () => {
  const h = await startHarness(stack);
  try {
    const kind = { tag: "mcp.tool.add", label: "Add" };
    const a = await submit(h, "MEM", "a", [], { autoApprovable: true, actionKind: kind });
    const b = await submit(h, "MEM", "b"); // needs a person
    const c = await submit(h, "MEM", "c", [], { autoApprovable: true, actionKind: kind });
    const res = await call<unknown, { drained: ActionRecord[] }>(h.decisions, "setAutoApprovalRule", {
      workspaceId: h.ws,
      binding: "MEM",
      actionKindTag: kind.tag,
      enabled: true,
      setBy: "user:alice",
    });
    assert.deepEqual(
      res.drained.map((r) => r.id),
      [a],
    );
    assert.equal(res.drained[0]?.decidedBy, "rule:MEM/mcp.tool.add");
    await call(h.decisions, "reject", {
      workspaceId: h.ws,
      actionId: b,
      decidedBy: "user:alice",
      reason: "no",
    });
    assert.deepEqual(
      h.gatekeeper.appliedIn(h.ws).map((r) => r.actionId),
      [a, c],
    );
    const d = await call<unknown, SubmitActionResponse>(h.queue, "submitAction", {
      callerToken: h.token("MEM"),
      localId: "d",
      description: description({ autoApprovable: true, actionKind: kind }),
      payloadJson: "{}",
    });
    assert.equal(d.status, ActionStatus.ACTION_STATUS_APPLIED);
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

test("WatchLog delivers the catch-up and then live changes", async () => {
  const h = await startHarness(stack);
  try {
    const a = await submit(h, "MEM", "a");
    const changes: LogChange[] = [];
    const stream = h.decisions.watchLog({ workspaceId: h.ws, fromRevision: a });
    stream.on("data", (c: LogChange) => changes.push(c));
    stream.on("error", () => undefined);
    await call(h.decisions, "approve", { workspaceId: h.ws, actionId: a, decidedBy: "user:alice" });
    const deadline = Date.now() + 3000;
    while (changes.length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
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

test("start-up recovery gives a pending action without a workflow its workflow", async () => {
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
      ],
      rev,
    );
  } finally {
    await store.close();
  }
  const connection = await Connection.connect({ address: stack.temporal.address });
  const handle = new Client({ connection }).workflow.getHandle(actionWorkflowId(ws, a));
  try {
    await assert.rejects(handle.describe(), WorkflowNotFoundError);
    const h = await startHarness(stack, { ws });
    try {
      assert.equal((await handle.describe()).status.name, "RUNNING");
    } finally {
      await h.close();
    }
  } finally {
    await connection.close();
  }
});

test("a pending action expires after the configured TTL and cascades with reason expired", async () => {
  const h = await startHarness(stack, { service: { actionTtlMs: 3000 } });
  try {
    const a = await submit(h, "MEM", "a");
    // b's own TTL must end well after a's, so b is rejected by a's expiry cascade, not by its own timer.
    await new Promise((r) => setTimeout(r, 2000));
    const b = await submit(h, "MEM", "b", ["a"]);
    const get = (id: number) =>
      call<unknown, ActionRecord>(h.decisions, "getAction", { workspaceId: h.ws, actionId: id });
    assert.ok(
      await eventually(async () => (await get(a)).status === ActionStatus.ACTION_STATUS_REJECTED, 20_000),
      "the action should expire",
    );
    assert.match((await get(a)).reason, /expired/);
    const dep = await get(b);
    assert.equal(dep.status, ActionStatus.ACTION_STATUS_REJECTED);
    assert.equal(dep.cascadedFrom, a);
    assert.equal(h.gatekeeper.appliedIn(h.ws).length, 0);
  } finally {
    await h.close();
  }
});

test("a batch approval applies in submission order and reports every record", async () => {
  const h = await startHarness(stack);
  try {
    const ids = [];
    for (const l of ["a", "b", "c", "d"]) ids.push(await submit(h, l === "c" ? "GIT" : "MEM", l));
    const res = await call<unknown, DecisionResponse>(h.decisions, "approveBatch", {
      workspaceId: h.ws,
      actionIds: [...ids].reverse(),
      decidedBy: "user:alice",
      all: false,
    });
    assert.deepEqual(
      h.gatekeeper.appliedIn(h.ws).map((r) => r.actionId),
      ids,
    );
    assert.deepEqual(
      res.actions.map((r) => [r.id, r.status]),
      ids.map((id) => [id, ActionStatus.ACTION_STATUS_APPLIED]),
    );
  } finally {
    await h.close();
  }
});
