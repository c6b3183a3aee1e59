/**
 * PrepareRevert and the revert's apply against a real PostgreSQL: an applied UPDATE, INSERT and
 * DELETE are each restored to their before-images (restricted columns too), exactly once; when a
 * row changed after the apply, the revert fails naming the rows by primary key and changes nothing.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { applyVia, type Db, type Harness, prepareRevertVia, startDb, startHarness } from "./helpers.ts";

const URL = "postgres://shop/shop#schema=sales";
let db: Db;
let h: Harness;
/** Action ids of the reverts (the approval service would assign them; far above the fake queue's). */
let nextRevertId = 1_000_000;

before(async () => {
  db = await startDb();
  h = await startHarness(db);
});
after(async () => {
  await h?.close();
  await db?.stop();
});

const snapshot = () =>
  db.admin("SELECT to_jsonb(c.*) AS c FROM sales.customers c ORDER BY id") as Promise<
    { c: Record<string, unknown> }[]
  >;

/** Stages `sql` through a session, applies it, and prepares its revert. */
async function applyAndPrepareRevert(sql: string, params: unknown[] = []) {
  const s = h.open(URL);
  const w = await s.db.execute({ sql, params });
  s.close();
  const sub = h.approval.submissions.find((x) => x.localId === w.id)!;
  const applied = await h.apply(URL, w.id);
  assert.equal(applied.ok, true, applied.error);
  const rev = await prepareRevertVia(h.client, URL, sub, applied.resultJson);
  assert.equal(rev.description?.implementsRevert, sub.actionId);
  assert.equal(rev.description?.actionKind?.tag, "postgres.revert");
  assert.equal(rev.description?.autoApprovable, false);
  return {
    sub,
    rowCount: w.rowCount,
    revert: { localId: rev.localId, actionId: nextRevertId++, payloadJson: rev.payloadJson },
  };
}

async function revertMarkers(actionId: number) {
  return db.admin("SELECT 1 FROM gatehouse.applied_actions WHERE workspace_id = 'ws-1' AND action_id = $1", [
    actionId,
  ]);
}

test("an applied UPDATE, INSERT and DELETE are each restored to their before-images, once", async () => {
  const cases: [string, unknown[]][] = [
    ["UPDATE customers SET tier = $1, email = NULL WHERE id IN (1, 2)", ["platinum"]],
    ["INSERT INTO customers (id, name, email) VALUES (7, 'Gil', 'gil@example.com'), (8, 'Hal', NULL)", []],
    ["DELETE FROM customers WHERE id = 3", []],
  ];
  for (const [sql, params] of cases) {
    const start = await snapshot();
    const { rowCount, revert } = await applyAndPrepareRevert(sql, params);
    assert.notDeepEqual(await snapshot(), start, `${sql} changed the table`);
    const r = await applyVia(h.client, URL, revert);
    assert.equal(r.ok, true, r.error);
    assert.equal((JSON.parse(r.resultJson) as { rowCount: number }).rowCount, rowCount);
    assert.deepEqual(await snapshot(), start, `${sql} is reverted, every column as before`);
    assert.equal((await revertMarkers(revert.actionId)).length, 1, "the revert is marked applied");
    const again = await applyVia(h.client, URL, revert);
    assert.equal(again.ok, true, again.error);
    assert.deepEqual(await snapshot(), start, "a retried revert changes nothing");
  }
});

test("a revert of rows changed since the apply fails naming them by primary key and changes nothing", async () => {
  const { sub, revert } = await applyAndPrepareRevert(
    "UPDATE customers SET tier = 'silver' WHERE id IN (1, 2, 3)",
  );
  await db.admin("UPDATE sales.customers SET name = 'Bob' WHERE id = 2");
  await db.admin("UPDATE sales.customers SET tier = 'bronze' WHERE id = 3");
  const changed = await snapshot();
  const r = await applyVia(h.client, URL, revert);
  assert.equal(r.ok, false);
  assert.equal(
    r.error,
    `2 row(s) of sales.customers changed since action ${sub.actionId} was applied, so nothing was reverted; rows (primary key id): [2], [3]`,
  );
  assert.deepEqual(await snapshot(), changed, "row 1 still holds the applied write; nothing was reverted");
  assert.equal((await revertMarkers(revert.actionId)).length, 0, "the failed revert is not marked applied");
});

test("a revert of a DELETE whose key exists again fails naming it and changes nothing", async () => {
  await db.admin("INSERT INTO sales.customers (id, name) VALUES (9, 'Ida')");
  const { revert } = await applyAndPrepareRevert("DELETE FROM customers WHERE id = 9");
  await db.admin("INSERT INTO sales.customers (id, name, tier) VALUES (9, 'Ivy', 'gold')");
  const changed = await snapshot();
  const r = await applyVia(h.client, URL, revert);
  assert.equal(r.ok, false);
  assert.match(
    r.error,
    /1 row\(s\) of sales\.customers changed since action \d+ was applied, so nothing was reverted; rows \(primary key id\): \[9\]$/,
  );
  assert.deepEqual(await snapshot(), changed);
  assert.equal((await revertMarkers(revert.actionId)).length, 0);
});
