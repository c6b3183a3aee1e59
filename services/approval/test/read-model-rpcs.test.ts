/**
 * GetInbox, GetActionDetail and GetLogPage over the real service (real gRPC, SQLite store, Temporal
 * dev server, lifecycle worker): answers equal the folded log, reflect a decision made just before
 * the call, refuse bad requests with the field named, and a durable read model resumes after a
 * restart of the service.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import {
  type ActionDetailView,
  ActionStatus,
  type GetInboxResponse,
  type LogPage,
  LogView,
} from "@gatehouse/proto";
import { status } from "@grpc/grpc-js";
import { call, type Harness, newWorkspaceId, type Stack, startHarness, startStack } from "./harness.ts";
import { rejects, submit } from "./suite-helpers.ts";

let stack: Stack;
before(async () => {
  stack = await startStack();
});
after(async () => {
  await stack?.close();
});

const inbox = (h: Harness, ids: string[], recentLimit = 50) =>
  call<unknown, GetInboxResponse>(h.decisions, "getInbox", { workspaceIds: ids, recentLimit });
const page = (h: Harness, afterId: number, limit: number, ws = h.ws) =>
  call<unknown, LogPage>(h.decisions, "getLogPage", { workspaceId: ws, afterId, limit });

/** Every entry of the log through GetLogPage pages of `limit`, as one LogView. */
async function pagedLog(h: Harness, limit: number): Promise<LogView> {
  const entries: LogView["entries"] = [];
  let first: LogView | undefined;
  for (let afterId = 0; ; ) {
    const p = await page(h, afterId, limit);
    first ??= p.view;
    entries.push(...(p.view as LogView).entries);
    if (!p.nextAfterId) break;
    afterId = p.nextAfterId;
  }
  return { ...(first as LogView), entries };
}

test("the inbox, action detail and log pages equal the folded log and include a decision made just before", async () => {
  const h = await startHarness(stack);
  try {
    const a = await submit(h, "MEM", "a");
    const b = await submit(h, "MEM", "b", ["a"]);
    const c = await submit(h, "MEM", "c");
    await call(h.decisions, "reject", {
      workspaceId: h.ws,
      actionId: c,
      decidedBy: "user:bob",
      reason: "no",
    });
    // Read-your-writes: the reject was stored before this call, so the answer includes it.
    const res = await inbox(h, [h.ws, newWorkspaceId()]);
    assert.equal(res.workspaces.length, 1, "an unknown workspace is left out");
    const w = res.workspaces[0];
    assert.deepEqual(
      w?.pending.map((x) => x.id),
      [a, b],
    );
    assert.deepEqual(
      w?.recent.map((x) => [x.id, x.status]),
      [[c, ActionStatus.ACTION_STATUS_REJECTED]],
    );
    assert.equal(w?.revision, await h.revision());

    const live = await call<unknown, LogView>(h.decisions, "getLog", { workspaceId: h.ws });
    for (const limit of [1, 2, 500]) {
      const paged = await pagedLog(h, limit);
      assert.equal(
        Buffer.compare(LogView.encode(paged).finish(), LogView.encode(live).finish()),
        0,
        `pages of ${limit} make up the folded log byte for byte`,
      );
    }

    const d = await call<unknown, ActionDetailView>(h.decisions, "getActionDetail", {
      workspaceId: h.ws,
      actionId: b,
    });
    assert.equal(d.action?.id, b);
    assert.deepEqual(
      d.dependencies.map((x) => x.id),
      [a],
    );
    assert.deepEqual(d.undecidedDependencies, [a]);
    const da = await call<unknown, ActionDetailView>(h.decisions, "getActionDetail", {
      workspaceId: h.ws,
      actionId: a,
    });
    assert.deepEqual(
      da.dependents.map((x) => x.id),
      [b],
    );
  } finally {
    await h.close();
  }
});

test("bad read requests name the field; unknown workspaces and actions are NOT_FOUND", async () => {
  const h = await startHarness(stack);
  try {
    await rejects(inbox(h, []), status.INVALID_ARGUMENT, /workspace_ids/);
    await rejects(inbox(h, [h.ws], -1), status.INVALID_ARGUMENT, /recent_limit/);
    await rejects(inbox(h, [h.ws, ""]), status.INVALID_ARGUMENT, /workspace_ids: .*empty/);
    await rejects(page(h, 0, 5001), status.INVALID_ARGUMENT, /limit/);
    await rejects(page(h, -1, 10), status.INVALID_ARGUMENT, /after_id/);
    await rejects(page(h, 0, 10, newWorkspaceId()), status.NOT_FOUND);
    await rejects(
      call(h.decisions, "getActionDetail", { workspaceId: h.ws, actionId: 0 }),
      status.INVALID_ARGUMENT,
      /action_id/,
    );
    await rejects(
      call(h.decisions, "getActionDetail", { workspaceId: h.ws, actionId: 9999 }),
      status.NOT_FOUND,
    );
    await rejects(
      call(h.decisions, "getActionDetail", { workspaceId: newWorkspaceId(), actionId: 1 }),
      status.NOT_FOUND,
    );
  } finally {
    await h.close();
  }
});

test("a durable read model (tables in the store's own SQLite file) answers again after the service restarts", async () => {
  const first = await startHarness(stack, { service: { readModelUrl: stack.storeUrl } });
  const ws = first.ws;
  let a: number;
  try {
    a = await submit(first, "MEM", "a");
    assert.equal((await inbox(first, [ws])).workspaces[0]?.pending.length, 1);
  } finally {
    await first.close();
  }
  const second = await startHarness(stack, { ws, service: { readModelUrl: stack.storeUrl } });
  try {
    const b = await submit(second, "MEM", "b");
    const w = (await inbox(second, [ws])).workspaces[0];
    assert.deepEqual(
      w?.pending.map((x) => x.id),
      [a, b],
    );
  } finally {
    await second.close();
  }
});
