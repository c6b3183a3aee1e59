/**
 * The approval service's side of the batch engine, with the real worker process and a real
 * Temporal dev server: a batch approval is one append (counted at the store), and expiry is a
 * sweep — many pending actions expire without any workflow per action (Temporal's visibility lists
 * what exists).
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type EventStore, openSqliteEventStore } from "@gatehouse/event-store";
import {
  type ActionRecord,
  ActionStatus,
  type DecisionResponse,
  type SubmitActionResponse,
} from "@gatehouse/proto";
import { Client, Connection } from "@temporalio/client";
import { call, description, eventually, type Stack, startHarness, startStack } from "./harness.ts";

let stack: Stack;
before(async () => {
  stack = await startStack();
});
after(async () => {
  await stack?.close();
});

/** A store whose appends are counted by the event types they carry. */
function countingStore(path: string): { store: EventStore; appendsWith(type: string): number } {
  const inner = openSqliteEventStore(path, { pollIntervalMs: 10 });
  const counts = new Map<string, number>();
  const store = new Proxy(inner, {
    get(target, prop, receiver) {
      if (prop === "append") {
        return (...args: Parameters<EventStore["append"]>) => {
          for (const t of new Set(args[1].map((e) => e.type))) counts.set(t, (counts.get(t) ?? 0) + 1);
          return target.append(...args);
        };
      }
      const v = Reflect.get(target, prop, receiver);
      return typeof v === "function" ? v.bind(target) : v;
    },
  });
  return { store, appendsWith: (type) => counts.get(type) ?? 0 };
}

test("approving a batch of 40 records every approval in one append, then waits for the applies and answers APPLIED", async () => {
  const counting = countingStore(stack.eventsPath);
  const h = await startHarness(stack, { service: { store: counting.store } });
  try {
    const ids: number[] = [];
    for (let i = 0; i < 40; i++) {
      const res = await call<unknown, SubmitActionResponse>(h.queue, "submitAction", {
        callerToken: h.token("MEM"),
        localId: `a${i}`,
        description: description(),
        payloadJson: "{}",
      });
      ids.push(res.actionId);
    }
    const res = await call<unknown, DecisionResponse>(h.decisions, "approveBatch", {
      workspaceId: h.ws,
      actionIds: ids,
      decidedBy: "user:alice",
      all: false,
    });
    assert.equal(counting.appendsWith("ActionApproved"), 1, "one append holds the 40 approvals");
    assert.deepEqual(
      res.actions.map((r) => [r.id, r.status]),
      ids.map((id) => [id, ActionStatus.ACTION_STATUS_APPLIED]),
    );
    assert.deepEqual(
      h.gatekeeper.appliedIn(h.ws).map((r) => r.actionId),
      ids,
      "applied once each, in submission order",
    );
  } finally {
    await h.close();
    await counting.store.close();
  }
});

test("return_once_recorded answers right after the append with the records APPROVED; the applies follow", async () => {
  const h = await startHarness(stack);
  try {
    const ids: number[] = [];
    for (let i = 0; i < 5; i++) {
      const res = await call<unknown, SubmitActionResponse>(h.queue, "submitAction", {
        callerToken: h.token("MEM"),
        localId: `r${i}`,
        description: description(),
        payloadJson: "{}",
      });
      ids.push(res.actionId);
    }
    h.gatekeeper.delayMs = 200;
    const res = await call<unknown, DecisionResponse>(h.decisions, "approveBatch", {
      workspaceId: h.ws,
      actionIds: ids,
      decidedBy: "user:alice",
      all: false,
      returnOnceRecorded: true,
    });
    assert.ok(
      res.actions.every((r) => r.status !== ActionStatus.ACTION_STATUS_APPLIED),
      "the answer does not wait for the applies (each takes 200 ms here)",
    );
    assert.deepEqual(
      res.actions.map((r) => r.id),
      ids,
    );
    const get = (id: number) =>
      call<unknown, ActionRecord>(h.decisions, "getAction", { workspaceId: h.ws, actionId: id });
    for (const id of ids)
      assert.ok(await eventually(async () => (await get(id)).status === ActionStatus.ACTION_STATUS_APPLIED));
  } finally {
    await h.close();
  }
});

test("200 pending actions expire by the sweep, with their cascade, and no workflow exists per action", async () => {
  const h = await startHarness(stack, { service: { actionTtlMs: 15_000, expirySweepMs: 200 } });
  const connection = await Connection.connect({ address: stack.temporal.address });
  try {
    const ids: number[] = [];
    for (let i = 0; i < 200; i++) {
      const res = await call<unknown, SubmitActionResponse>(h.queue, "submitAction", {
        callerToken: h.token("MEM"),
        localId: `x${i}`,
        description: description({ dependsOn: i > 0 && i % 50 === 0 ? [`x${i - 1}`] : [] }),
        payloadJson: "{}",
      });
      ids.push(res.actionId);
    }
    const list = await call<unknown, { actions: ActionRecord[] }>(h.decisions, "listActions", {
      workspaceId: h.ws,
      pendingOnly: false,
    });
    assert.equal(list.actions.filter((a) => a.status === ActionStatus.ACTION_STATUS_PENDING).length, 200);
    const all = async () =>
      (
        await call<unknown, { actions: ActionRecord[] }>(h.decisions, "listActions", {
          workspaceId: h.ws,
          pendingOnly: false,
        })
      ).actions;
    assert.ok(
      await eventually(async () =>
        (await all()).every((a) => a.status === ActionStatus.ACTION_STATUS_REJECTED),
      ),
      "every action expired",
    );
    const actions = await all();
    for (const a of actions) {
      if (a.cascadedFrom) assert.match(a.reason, /^needed action \d+, which did not complete$/);
      else assert.deepEqual([a.reason, a.decidedBy], ["expired", "system:expiry"]);
    }
    // What Temporal holds for this workspace: at most the binding's run, nothing per action.
    const client = new Client({ connection });
    const ours: string[] = [];
    for await (const w of client.workflow.list()) if (w.workflowId.includes(h.ws)) ours.push(w.workflowId);
    assert.ok(ours.length <= 1, `workflows of the workspace: ${ours.join(", ")}`);
    assert.ok(ours.every((id) => id === `binding-run/${h.ws}/MEM`));
  } finally {
    await connection.close();
    await h.close();
  }
});

test("start-up recovery terminates the per-action workflows of the previous engine, saying why (the upgrade path)", async () => {
  const connection = await Connection.connect({ address: stack.temporal.address });
  try {
    const client = new Client({ connection });
    // An `actionLifecycle` of an older version, still running (no worker of that version polls).
    const old = await client.workflow.start("actionLifecycle", {
      workflowId: `action/old-${Date.now()}/7`,
      taskQueue: "gatehouse-lifecycle-old",
      args: [{ workspaceId: "old", actionId: 7, ttlMs: 60_000 }],
    });
    const h = await startHarness(stack);
    try {
      const d = await old.describe();
      assert.equal(d.status.name, "TERMINATED");
      const history = await old.fetchHistory();
      const ended = history.events?.find((e) => e.workflowExecutionTerminatedEventAttributes);
      assert.match(
        ended?.workflowExecutionTerminatedEventAttributes?.reason ?? "",
        /^upgrade: per-action lifecycle workflows are replaced by binding runs/,
      );
    } finally {
      await h.close();
    }
  } finally {
    await connection.close();
  }
});
