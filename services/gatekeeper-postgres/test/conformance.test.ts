/**
 * The kit's gatekeeper conformance suite against the PostgreSQL gatekeeper and a REAL PostgreSQL
 * server (`startDb`, the shop database), one database and one approval fake for every case; the
 * restart starts a new gatekeeper on both. The binding is scoped to `sales.customers`; writes
 * are INSERTs of a customer named after the case's marker.
 */
import { after } from "node:test";
import { gatekeeperConformance } from "@gatehouse/gatekeeper-kit/conformance";
import { type Db, FakeApprovalQueue, type Harness, startDb, startHarness } from "./helpers.ts";

const URL = "postgres://shop/shop#table=sales.customers";
let db: Db | undefined;
after(async () => {
  await db?.stop();
});

gatekeeperConformance({
  name: "postgres",
  async start() {
    db = await startDb();
    const started = db;
    const approval = await new FakeApprovalQueue({ binding: "DB" }).start();
    let h: Harness = await startHarness(started, { approval });
    let nextId = 1000;
    const session = () => h.open(URL).db;
    return {
      approval,
      client: () => h.client,
      workspaceId: "ws-1",
      binding: "DB",
      url: URL,
      trust: "byo",
      read: () => session().query({ sql: "SELECT id, name FROM sales.customers ORDER BY id" }),
      failingRead: () => session().query({ sql: "SELECT id / 0 AS never FROM sales.customers" }),
      outOfScopeIds: { existing: "sales.orders", missing: "sales.nothing" },
      outOfScopeRead: (which) =>
        session().query({ sql: `SELECT * FROM ${which === "existing" ? "sales.orders" : "sales.nothing"}` }),
      async stageWrite(marker) {
        const res = await session().execute({
          sql: "INSERT INTO sales.customers (id, name) VALUES ($1, $2)",
          params: [nextId++, marker],
        });
        return res.id;
      },
      async effects(marker) {
        const rows = await started.admin<{ n: number }>(
          "SELECT count(*)::int AS n FROM sales.customers WHERE name = $1",
          [marker],
        );
        return rows[0]!.n;
      },
      async overlay() {
        const res = await session().query({ sql: "SELECT id, name FROM sales.customers ORDER BY id" });
        return { rows: res.rows, pending: res.pending };
      },
      async restart() {
        await h.close();
        h = await startHarness(started, { approval });
      },
      async close() {
        await h.close();
        approval.close();
      },
    };
  },
});
