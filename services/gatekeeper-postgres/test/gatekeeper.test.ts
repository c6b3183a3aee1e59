/**
 * gatekeeper-postgres against a real PostgreSQL (Debian's, on loopback): reads as paged
 * observations with pending writes replayed, simulated writes with before/after rows, exactly-once
 * apply, reject cascades, scope refusals that never reach the server, and bad input.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ApprovalQueueService } from "@gatehouse/proto";
import { type Db, type Harness, rejects, startDb, startHarness } from "./helpers.ts";

const URL = "postgres://shop/shop#schema=sales";
let db: Db;
let h: Harness;

before(async () => {
  db = await startDb();
  h = await startHarness(db, { limits: { maxRows: 2 } });
});
after(async () => {
  await h?.close();
  await db?.stop();
});

void ApprovalQueueService;

describe("reads, simulated writes, approval", () => {
  test("paged reads are observations; writes show in later reads of this and the next session; applies land once", async () => {
    const s1 = h.open(URL);
    const before = h.approval.observations.length;
    const p0 = await s1.db.query({ sql: "SELECT id, name FROM customers ORDER BY id" });
    assert.deepEqual(p0.rows, [
      { id: 1, name: "Ada" },
      { id: 2, name: "Bo" },
    ]);
    assert.equal(p0.more, true);
    const p1 = await s1.db.query({
      sql: "SELECT id, name FROM customers ORDER BY id",
      offset: p0.nextOffset,
    });
    assert.deepEqual(p1.rows, [{ id: 3, name: "Cy" }]);
    assert.equal(p1.more, false);
    assert.equal(h.approval.observations.length, before + 2, "one observation per page");
    assert.equal(h.approval.observations.at(-1)?.containsRestrictedData, false);

    const up = await s1.db.execute({
      sql: "UPDATE customers SET tier = $1 WHERE id IN (2, 3)",
      params: ["silver"],
    });
    assert.equal(up.rowCount, 2);
    const ins = await s1.db.execute({
      sql: "INSERT INTO customers (id, name, tier) VALUES ($1, $2, $3)",
      params: [4, "Di", "gold"],
    });
    assert.equal(ins.rowCount, 1);
    const seen = await s1.db.query({
      sql: "SELECT id, tier FROM customers WHERE id > 1 ORDER BY id",
      offset: 0,
    });
    assert.deepEqual(seen.rows, [
      { id: 2, tier: "silver" },
      { id: 3, tier: "silver" },
    ]);
    assert.deepEqual(seen.pending, [up.id, ins.id]);
    s1.close();

    const s2 = h.open(URL);
    const next = await s2.db.query({ sql: "SELECT count(*)::int AS n FROM customers WHERE tier <> 'basic'" });
    assert.deepEqual(next.rows, [{ n: 4 }], "the next session's read includes the pending writes");
    assert.deepEqual(
      await db.admin("SELECT count(*)::int AS n FROM sales.customers"),
      [{ n: 3 }],
      "nothing written yet",
    );

    const upDesc = h.approval.submissions.find((s) => s.localId === up.id)!.description;
    assert.match(upDesc.description, /2 row\(s\) change/);
    assert.match(
      upDesc.description,
      /before: \{"id": 2, "name": "Bo", "tier": "basic", "email": "bo@example.com"\}/,
    );
    assert.match(upDesc.description, /after: {2}\{"id": 2, "name": "Bo", "tier": "silver"/);
    assert.match(upDesc.description, /UPDATE customers SET tier = \$1/);
    assert.match(upDesc.description, /\["silver"\]/);
    assert.equal(upDesc.descriptionIsComplete, true);
    const insDesc = h.approval.submissions.find((s) => s.localId === ins.id)!.description;
    assert.match(insDesc.description, /\+ \{"id": 4, "name": "Di", "tier": "gold", "email": null\}/);

    for (const id of [up.id, ins.id]) {
      const r = await h.apply(URL, id);
      assert.equal(r.ok, true, r.error);
    }
    assert.deepEqual(await db.admin("SELECT id, tier FROM sales.customers ORDER BY id"), [
      { id: 1, tier: "gold" },
      { id: 2, tier: "silver" },
      { id: 3, tier: "silver" },
      { id: 4, tier: "gold" },
    ]);
    // A second apply of the same action (a retry) finds the marker and changes nothing.
    const again = await h.apply(URL, ins.id);
    assert.equal(again.ok, true);
    assert.deepEqual(await db.admin("SELECT count(*)::int AS n FROM sales.customers WHERE id = 4"), [
      { n: 1 },
    ]);
    const after = await s2.db.query({ sql: "SELECT count(*)::int AS n FROM customers" });
    assert.deepEqual(after.pending, [], "applied writes leave the overlay");
    assert.deepEqual(after.rows, [{ n: 4 }]);
    s2.close();
  });

  test("reject a write: later reads no longer show it, and writes built on it cascade", async () => {
    const s = h.open(URL);
    const a = await s.db.execute({ sql: "INSERT INTO customers (id, name) VALUES (20, 'Ed')" });
    const b = await s.db.execute({ sql: "INSERT INTO orders (id, customer_id, total) VALUES (30, 20, 5)" });
    const c = await s.db.execute({ sql: "INSERT INTO audit (note) VALUES ('unrelated')" });
    const deps = h.approval.submissions.find((x) => x.localId === b.id)!.description.dependsOn;
    assert.deepEqual(deps, [a.id], "the order depends on the pending customer it references");
    const withAll = await s.db.query({
      sql: "SELECT (SELECT count(*) FROM orders WHERE id = 30)::int AS o, (SELECT count(*) FROM audit)::int AS n",
    });
    assert.deepEqual(withAll.rows, [{ o: 1, n: 1 }]);
    await h.reject(a.id);
    const later = await s.db.query({
      sql: "SELECT (SELECT count(*) FROM customers WHERE id = 20)::int AS c, (SELECT count(*) FROM orders WHERE id = 30)::int AS o, (SELECT count(*) FROM audit)::int AS n",
    });
    assert.deepEqual(
      later.rows,
      [{ c: 0, o: 0, n: 1 }],
      "the customer and its order are gone; the unrelated write stays",
    );
    assert.deepEqual(later.pending, [c.id]);
    await h.reject(c.id);
    s.close();
  });

  test("restricted columns mark the observation; other columns do not", async () => {
    const s = h.open(URL);
    await s.db.query({ sql: "SELECT name FROM customers WHERE id = 1" });
    assert.equal(h.approval.observations.at(-1)?.containsRestrictedData, false);
    await s.db.query({ sql: "SELECT upper(email) AS e FROM customers WHERE id = 1" });
    assert.equal(h.approval.observations.at(-1)?.containsRestrictedData, true);
    await s.db.query({ sql: "SELECT * FROM customers WHERE id = 1" });
    assert.equal(h.approval.observations.at(-1)?.containsRestrictedData, true);
    const d = await s.db.describeTable({ table: "customers" });
    assert.deepEqual(d.primaryKey, ["id"]);
    assert.equal(d.columns.find((c) => c.name === "email")?.restricted, true);
    const t = await s.db.listTables();
    assert.deepEqual(
      t.tables.map((x) => x.name),
      ["audit", "customers", "orders"],
    );
    s.close();
  });
});

describe("scope: refused before reaching the database", () => {
  test("each refusal names its reason and never appears in the server log", async () => {
    const s = h.open("postgres://shop/shop#table=sales.customers");
    const cases: [string, "query" | "execute", RegExp][] = [
      ["SELECT * FROM sales.orders WHERE id = 424242", "query", /sales\.orders/],
      ["WITH x AS (SELECT * FROM secret.keys WHERE id = 424243) SELECT * FROM x", "query", /secret\.keys/],
      [
        "SELECT name FROM sales.customers WHERE id IN (SELECT id FROM secret.keys WHERE k = 'x424244')",
        "query",
        /secret\.keys/,
      ],
      ["SELECT pg_read_file('/etc/passwd424245')", "query", /pg_read_file/],
      ["COPY (SELECT 424246) TO PROGRAM 'id'", "query", /COPY|copy/],
      ["SET ROLE postgres", "query", /SET|set/],
      ["SELECT 1; DELETE FROM sales.customers WHERE id = 424247", "query", /second statement/],
      ["DELETE FROM sales.customers WHERE id = 424248", "query", /write|execute/],
      ["SELECT 424249", "execute", /read method|query/],
    ];
    for (const [sql, method, re] of cases) {
      await rejects(s.db[method]({ sql }), re);
    }
    const log = db.server.log();
    for (const n of [
      "424242",
      "424243",
      "424244",
      "424245",
      "424246",
      "424247",
      "424248",
      "424249",
      "SET ROLE",
    ]) {
      assert.equal(log.includes(n), false, `${n} reached the server log`);
    }
    assert.ok(log.includes("statement:"), "the server logs statements (the check above can fail)");
    s.close();
  });
});

describe("bad input", () => {
  test("a syntax error comes back with PostgreSQL's message and position", async () => {
    const s = h.open(URL);
    await rejects(
      s.db.query({ sql: "SELEC id FROM customers" }),
      /syntax error at or near "SELEC" \(at position 1\)/,
    );
    await rejects(
      s.db.query({ sql: "SELECT id FROM customers WHERE" }),
      /syntax error at end of input \(at position 31\)/,
    );
    await rejects(s.db.query({ sql: "SELECT nope FROM customers" }), /42703 column "nope" does not exist/);
    await rejects(s.db.query({ sql: "SELECT 1", params: [{ a: 1 }] }), /params\[0\] must be a string/);
    s.close();
  });

  test("a statement timeout is reported as such", async () => {
    const slow = await startHarness(db, { registry: { statementTimeoutMs: 300 } });
    const lock = await db.client();
    try {
      await lock.query("BEGIN; LOCK TABLE sales.orders IN ACCESS EXCLUSIVE MODE");
      const s = slow.open(URL);
      const n = slow.approval.observations.length;
      await rejects(s.db.query({ sql: "SELECT count(*) FROM orders" }), /statement timeout \(300 ms\)/);
      assert.equal(slow.approval.observations.length, n, "nothing recorded");
      s.close();
    } finally {
      await lock.query("ROLLBACK");
      await lock.end();
      await slow.close();
    }
  });

  test("a connection dropped mid-read returns nothing of that page", async () => {
    const lock = await db.client();
    const s = h.open(URL);
    try {
      await lock.query("BEGIN; LOCK TABLE sales.orders IN ACCESS EXCLUSIVE MODE");
      const n = h.approval.observations.length;
      // Awaited at once so the call is sent now (a capnweb RpcPromise is a thenable).
      const read = (async () => await s.db.query({ sql: "SELECT * FROM orders" }))();
      read.catch(() => undefined);
      const deadline = Date.now() + 60_000;
      // Wait until the gatekeeper's backend is blocked on the lock, then kill it.
      for (;;) {
        const waiting = await db.admin<{ pid: number }>(
          "SELECT pid FROM pg_stat_activity WHERE application_name = 'gatehouse-gatekeeper-postgres' AND wait_event_type = 'Lock'",
        );
        if (waiting.length > 0) {
          await db.admin("SELECT pg_terminate_backend($1)", [waiting[0]!.pid]);
          break;
        }
        assert.ok(Date.now() < deadline, "the gatekeeper's read never waited on the lock");
        await new Promise((r) => setTimeout(r, 20));
      }
      await rejects(read, /connection to the database was lost.*nothing of it was returned/);
      assert.equal(h.approval.observations.length, n, "nothing recorded");
    } finally {
      await lock.query("ROLLBACK");
      await lock.end();
    }
    const ok = await s.db.query({ sql: "SELECT count(*)::int AS n FROM orders" });
    assert.equal(ok.rows.length, 1, "the next read works on a fresh connection");
    s.close();
  });

  test("an apply whose row count changed since approval fails with both counts and changes nothing", async () => {
    const s = h.open(URL);
    const w = await s.db.execute({ sql: "UPDATE customers SET tier = 'vip' WHERE tier = 'gold'" });
    assert.equal(w.rowCount, 2);
    await db.admin("UPDATE sales.customers SET tier = 'gold' WHERE id = 3");
    const r = await h.apply(URL, w.id);
    assert.equal(r.ok, false);
    assert.match(r.error, /now changes 3 row\(s\); the approver saw 2; nothing was changed/);
    assert.deepEqual(await db.admin("SELECT count(*)::int AS n FROM sales.customers WHERE tier = 'vip'"), [
      { n: 0 },
    ]);
    s.close();
  });
});
