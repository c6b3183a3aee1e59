/**
 * The review fields gatekeeper-postgres puts on each write's description (summary, fields, risks,
 * pre-flight warnings, preview), from real simulations against a real PostgreSQL.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type Db, type Harness, startDb, startHarness } from "./helpers.ts";

const URL = "postgres://shop/shop#schema=sales";
let db: Db;
let h: Harness;

before(async () => {
  db = await startDb();
  h = await startHarness(db);
});
after(async () => {
  await h?.close();
  await db?.stop();
});

function descOf(id: string) {
  return h.approval.submissions.find((s) => s.localId === id)!.description;
}

test("an UPDATE of one row by key: summary, table/kind/rows/key fields, statement preview, no risks", async () => {
  const s = h.open(URL);
  const w = await s.db.execute({
    sql: "UPDATE customers\nSET tier = 'gold'\nWHERE id = 2\n-- promote Bo",
    params: [],
  });
  const d = descOf(w.id);
  assert.equal(d.summary, "UPDATE customers (1 row)");
  assert.deepEqual(d.fields, [
    { name: "table", value: "customers" },
    { name: "statement", value: "UPDATE" },
    { name: "rows", value: "1" },
    { name: "key", value: "id=2" },
  ]);
  assert.equal(d.preview, "UPDATE customers\nSET tier = 'gold'\nWHERE id = 2");
  assert.deepEqual(d.risks, []);
  assert.deepEqual(d.preflightWarnings, []);
});

test("a DELETE is destructive, names its row count, and warns when it matches 0 rows now", async () => {
  const s = h.open(URL);
  const w = await s.db.execute({ sql: "DELETE FROM audit WHERE note = 'nothing here'" });
  const d = descOf(w.id);
  assert.equal(d.summary, "DELETE FROM audit (0 rows)");
  assert.deepEqual(d.risks, [
    { kind: "destructive", reason: "deletes 0 rows from audit" },
    { kind: "irreversible", reason: "not all before-images captured (audit has no primary key)" },
  ]);
  assert.deepEqual(d.preflightWarnings, [
    "the statement matches 0 rows now: as things stand, approving it changes nothing",
  ]);
});

test("an UPDATE without WHERE is destructive even for few rows", async () => {
  const s = h.open(URL);
  const w = await s.db.execute({ sql: "UPDATE customers SET email = NULL" });
  const d = descOf(w.id);
  assert.equal(d.summary, "UPDATE customers (3 rows)");
  assert.deepEqual(d.risks, [
    { kind: "destructive", reason: "updates every row of customers (no WHERE): 3 rows now" },
  ]);
});

test("an UPDATE with a WHERE in a subquery only still counts as having no WHERE of its own", async () => {
  const s = h.open(URL);
  const w = await s.db.execute({
    sql: "UPDATE customers SET tier = (SELECT 'basic' WHERE true)",
  });
  assert.match(descOf(w.id).risks[0]?.reason ?? "", /no WHERE/);
});

test("an INSERT whose written strings hold SQL and invisible characters is content-flagged (and irreversible: audit has no primary key)", async () => {
  const s = h.open(URL);
  const w = await s.db.execute({
    sql: "INSERT INTO audit (note) VALUES ('cleanup: DROP TABLE orders'), ($1)",
    params: ["pay\u202Eexe.txt"],
  });
  const d = descOf(w.id);
  assert.equal(d.summary, "INSERT INTO audit (2 rows)");
  const reasons = d.risks.map((r) => `${r.kind}: ${r.reason}`);
  assert.deepEqual(reasons, [
    "irreversible: not all before-images captured (audit has no primary key)",
    "content: parameter $1 holds characters that do not show as themselves (U+202E)",
    "content: string literal 1 line 1: `DROP TABLE orders` drops a database object",
  ]);
  assert.equal(
    d.fields.find((f) => f.name === "key"),
    undefined,
    "no key field for several rows",
  );
});
