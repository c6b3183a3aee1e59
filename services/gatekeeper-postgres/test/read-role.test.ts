/**
 * A read with pending writes replays them as the write role; when the administrator made the write
 * role a member of the read role, the query itself then runs as the read role, so the database
 * enforces the read grant on it as well (a table only the write role may read is refused).
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type Db, type Harness, rejects, startDb, startHarness } from "./helpers.ts";

const URL = "postgres://shop/shop#schema=sales";
let db: Db;
let h: Harness;

before(async () => {
  db = await startDb();
  // A table in scope that only the write role may read.
  await db.admin(`CREATE TABLE sales.drafts (id int PRIMARY KEY, body text);
    INSERT INTO sales.drafts VALUES (1, 'draft');
    GRANT SELECT, INSERT, UPDATE, DELETE ON sales.drafts TO gatehouse_write`);
  h = await startHarness(db);
});
after(async () => {
  await h?.close();
  await db?.stop();
});

const pendingWrite = { sql: "UPDATE customers SET tier = $1 WHERE id = 1", params: ["platinum"] };

test("without the membership the read after a replay runs as the write role", async () => {
  const s = h.open(URL, "WITHOUT");
  await s.db.execute(pendingWrite);
  const who = await s.db.query({
    sql: "SELECT current_user AS u, (SELECT tier FROM customers WHERE id = 1) AS t",
  });
  assert.deepEqual(who.rows, [{ u: "gatehouse_write", t: "platinum" }]);
  const drafts = await s.db.query({ sql: "SELECT body FROM drafts" });
  assert.deepEqual(drafts.rows, [{ body: "draft" }]);
  s.close();
});

test("with the write role a member of the read role, the query runs as the read role and sees the replayed write", async () => {
  await db.admin("GRANT gatehouse_read TO gatehouse_write");
  const s = h.open(URL, "WITH");
  const none = await s.db.query({ sql: "SELECT current_user AS u" });
  assert.deepEqual(none.rows, [{ u: "gatehouse_read" }], "no pending writes: the read pool");
  await s.db.execute(pendingWrite);
  const who = await s.db.query({
    sql: "SELECT current_user AS u, (SELECT tier FROM customers WHERE id = 1) AS t",
  });
  assert.deepEqual(who.rows, [{ u: "gatehouse_read", t: "platinum" }]);
  await rejects(s.db.query({ sql: "SELECT body FROM drafts" }), /permission denied for table drafts/);
  const after = await db.admin<{ tier: string }>("SELECT tier FROM sales.customers WHERE id = 1");
  assert.deepEqual(after, [{ tier: "gold" }], "nothing was committed");
  s.close();
});
