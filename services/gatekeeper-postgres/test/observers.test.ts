/**
 * CheckObserver (strategy B) against a real PostgreSQL that checks passwords (startDb requirePasswords):
 * a person's own role is allowed when it has SELECT on every table the workspace read, refused
 * naming the tables it cannot read, refused when its password is wrong; a gatekeeper that saw no
 * reads checks every table in the binding's scope.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { checkObserverVia, type Db, type Harness, startDb, startHarness } from "./helpers.ts";

const URL = "postgres://shop/shop#schema=sales";
let db: Db;
let h: Harness;

before(async () => {
  db = await startDb({ requirePasswords: true });
  h = await startHarness(db);
});
after(async () => {
  await h?.close();
  await db?.stop();
});

const check = (credential: string, via: Harness = h) =>
  checkObserverVia(via.client, URL, "user:bob", credential);

test("allowed while the workspace read only tables the role can read; refused, naming them, once it read more", async () => {
  const s = h.open(URL);
  await s.db.query({ sql: "SELECT id, name FROM customers ORDER BY id" });
  assert.deepEqual(await check("bob:bob-pw"), {
    allowed: true,
    reason: "B: user:bob's own role can read all 1 table(s) the workspace read",
  });
  await s.db.query({ sql: "SELECT o.id FROM orders o JOIN customers c ON c.id = o.customer_id" });
  s.close();
  assert.deepEqual(await check("bob:bob-pw"), {
    allowed: false,
    reason: "B: user:bob's own role cannot read 1 table(s) the workspace read: sales.orders",
  });
  const all = await check("gatehouse_read:read-pw");
  assert.equal(all.allowed, true, all.reason);
  assert.match(all.reason, /can read all 2 table\(s\)/);
});

test("a wrong password, or a credential that is not role:password, is refused", async () => {
  assert.deepEqual(await check("bob:not-bobs-pw"), {
    allowed: false,
    reason: "B: user:bob's own credential cannot log in to the database",
  });
  assert.deepEqual(await check("bob"), {
    allowed: false,
    reason: 'B: user:bob must give their own database role as "role:password"',
  });
});

test("a gatekeeper that saw no reads of the binding checks every table in its scope", async () => {
  const fresh = await startHarness(db, { approval: h.approval });
  try {
    const r = await check("bob:bob-pw", fresh);
    assert.equal(r.allowed, false);
    assert.match(
      r.reason,
      /cannot read 2 table\(s\) the workspace read: (sales\.audit, sales\.orders|sales\.orders, sales\.audit)$/,
    );
    assert.equal((await check("gatehouse_read:read-pw", fresh)).allowed, true);
  } finally {
    await fresh.close();
  }
});
