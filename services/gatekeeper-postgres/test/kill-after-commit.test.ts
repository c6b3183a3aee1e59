/**
 * Issue acceptance: "Kill the gatekeeper between commit and reply → the retried apply changes
 * nothing and reports applied". A gatekeeper child process (kill-after-commit-child.ts) SIGKILLs
 * itself after the apply transaction committed; the caller's ApplyAction fails; the write and its
 * marker are in the database once; a NEW gatekeeper on the same database, given the same
 * ApplyAction, finds the marker, runs nothing and reports applied with the stored result.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { connectSession } from "@gatehouse/gatekeeper-kit";
import {
  applyVia,
  type Db,
  type DbApi,
  FakeApprovalQueue,
  type KillingGatekeeper,
  spawnKillingGatekeeper,
  startDb,
  startHarness,
} from "./helpers.ts";

const URL = "postgres://shop/shop#schema=sales";
let db: Db;
let approval: FakeApprovalQueue;
const children: KillingGatekeeper[] = [];

before(async () => {
  db = await startDb();
  approval = await new FakeApprovalQueue({ binding: "DB" }).start();
});
after(async () => {
  for (const c of children) await c.stop();
  approval?.close();
  await db?.stop();
});

/** Stages `sql` through a session on the child; returns the recorded submission. */
async function stage(k: KillingGatekeeper, sql: string) {
  const s = connectSession<DbApi & Record<string, never>>(k.client.openSession(), {
    workspaceId: "ws-1",
    binding: "DB",
    url: URL,
    trust: "byo",
    callerToken: "token-1",
    executionId: "exec-1",
  });
  try {
    const w = await (s.stub as unknown as DbApi).execute({ sql });
    assert.equal(w.rowCount, 1);
    const sub = approval.submissions.find((x) => x.localId === w.id);
    assert.ok(sub, "the write was submitted for approval");
    return sub;
  } finally {
    s.close();
  }
}

async function markers(actionId: number) {
  return db.admin<{ result: string; binding: string }>(
    "SELECT result, binding FROM gatehouse.applied_actions WHERE workspace_id = 'ws-1' AND action_id = $1",
    [actionId],
  );
}

/** Applies `sub` on a killing child, checks it died after the commit, then retries on a new gatekeeper. */
async function killThenRetry(
  sub: { localId: string; actionId: number; payloadJson: string },
  k: KillingGatekeeper,
  check: () => Promise<void>,
) {
  await assert.rejects(applyVia(k.client, URL, sub), "the caller never gets a reply");
  assert.deepEqual(await k.exited, { code: null, signal: "SIGKILL" }, "the child died by its own SIGKILL");
  await check();
  const marker = await markers(sub.actionId);
  assert.equal(marker.length, 1, "one marker row, committed with the write");
  assert.equal(marker[0]?.binding, "DB");
  assert.equal((JSON.parse(marker[0]!.result) as { rowCount: number }).rowCount, 1);

  const h = await startHarness(db, { approval });
  try {
    const retried = await applyVia(h.client, URL, sub);
    assert.equal(retried.ok, true, retried.error);
    assert.equal(retried.resultJson, marker[0]!.result, "the stored result is reported");
    await check();
    assert.equal((await markers(sub.actionId)).length, 1, "still one marker row");
    const again = await applyVia(h.client, URL, sub);
    assert.equal(again.ok, true, again.error);
    await check();
  } finally {
    await h.close();
  }
}

test("an UPDATE incrementing a number, killed between commit and reply, is applied once", async () => {
  const k = await spawnKillingGatekeeper(db, approval);
  children.push(k);
  const sub = await stage(k, "UPDATE orders SET total = total + 1 WHERE id = 10");
  assert.deepEqual(await db.admin("SELECT total::text AS t FROM sales.orders WHERE id = 10"), [
    { t: "12.50" },
  ]);
  await killThenRetry(sub, k, async () => {
    assert.deepEqual(
      await db.admin("SELECT total::text AS t FROM sales.orders WHERE id = 10"),
      [{ t: "13.50" }],
      "incremented exactly once",
    );
  });
});

test("an INSERT into a table without a primary key, killed between commit and reply, inserts one row", async () => {
  const k = await spawnKillingGatekeeper(db, approval);
  children.push(k);
  const sub = await stage(k, "INSERT INTO audit (note) VALUES ('killed-after-commit')");
  await killThenRetry(sub, k, async () => {
    assert.deepEqual(
      await db.admin("SELECT count(*)::int AS n FROM sales.audit WHERE note = 'killed-after-commit'"),
      [{ n: 1 }],
      "inserted exactly once (no key would stop a second insert)",
    );
  });
});
