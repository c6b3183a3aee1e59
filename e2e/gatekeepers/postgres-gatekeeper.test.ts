/**
 * The PostgreSQL gatekeeper across the real services (kernel routing, the approval service, the
 * lifecycle worker on a real Temporal dev server, the sandbox runner) on a real PostgreSQL started
 * on loopback: agent snippets read in pages (each page an observation), their writes are simulated
 * until a person approves them, applies land exactly once, a rejection cascades to the writes built
 * on it, and a read outside the resource's scope comes back to the snippet naming why.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { type PostgresServer, startPostgresServer } from "@gatehouse/event-store/postgres-server";
import { loadRegistryFile } from "@gatehouse/gatekeeper-postgres";
import { ActionStatus } from "@gatehouse/proto";
import { waitUntil } from "@gatehouse/service-kit";
import pg from "pg";
import { stringify } from "yaml";
import { type Harness, returned, startHarness, unary } from "../support/harness.ts";
import { untilFinal } from "../support/until-final.ts";

/** The shop database: read and write roles, the sales schema, a table outside it. */
const SHOP_SQL = `
CREATE ROLE gatehouse_read LOGIN PASSWORD 'read-pw';
CREATE ROLE gatehouse_write LOGIN PASSWORD 'write-pw';
CREATE SCHEMA sales;
CREATE SCHEMA secret;
CREATE TABLE sales.customers (id int PRIMARY KEY, name text NOT NULL, tier text NOT NULL DEFAULT 'basic');
CREATE TABLE sales.orders (id int PRIMARY KEY, customer_id int NOT NULL REFERENCES sales.customers(id), total numeric(10,2) NOT NULL);
CREATE TABLE sales.products (id int PRIMARY KEY, sku text NOT NULL);
CREATE TABLE secret.keys (id int PRIMARY KEY, k text);
INSERT INTO sales.customers VALUES (1, 'Ada', 'gold'), (2, 'Bo', 'basic'), (3, 'Cy', 'basic');
INSERT INTO sales.orders VALUES (10, 1, 12.50);
INSERT INTO sales.products SELECT i, 'sku-' || i FROM generate_series(1, 1200) AS i;
INSERT INTO secret.keys VALUES (1, 'hunter2');
GRANT USAGE ON SCHEMA sales TO gatehouse_read, gatehouse_write;
GRANT SELECT ON ALL TABLES IN SCHEMA sales TO gatehouse_read;
GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA sales TO gatehouse_write;
GRANT CREATE ON DATABASE shop TO gatehouse_write;
`;

/** Generous: the machine running the suite may be busy. */
const DEADLINE_MS = 180_000;

let server: PostgresServer;
let shop: pg.Pool;
let secrets: string;
let h: Harness;

before(async () => {
  server = await startPostgresServer();
  const boot = new pg.Client({ connectionString: server.url });
  await boot.connect();
  await boot.query("CREATE DATABASE shop");
  await boot.end();
  shop = new pg.Pool({ connectionString: server.url.replace(/\/gatehouse$/, "/shop"), max: 2 });
  await shop.query(SHOP_SQL);
  // The registry as an administrator writes it (docs/gatekeeper-postgres.md): passwords in files.
  secrets = mkdtempSync(join(tmpdir(), "gatehouse-pg-secrets-"));
  writeFileSync(join(secrets, "read-pw"), "read-pw\n", { mode: 0o600 });
  writeFileSync(join(secrets, "write-pw"), "write-pw\n", { mode: 0o600 });
  const file = join(secrets, "registry.yaml");
  writeFileSync(
    file,
    stringify({
      servers: {
        shop: {
          host: "127.0.0.1",
          port: server.port,
          databases: ["shop"],
          readRole: { user: "gatehouse_read", passwordFile: join(secrets, "read-pw") },
          writeRole: { user: "gatehouse_write", passwordFile: join(secrets, "write-pw") },
        },
      },
    }),
  );
  h = await startHarness(undefined, { postgresRegistry: await loadRegistryFile(file) });
});
after(async () => {
  await h?.close();
  await shop?.end();
  await server?.stop();
  if (secrets) rmSync(secrets, { recursive: true, force: true });
});

/** Rows of `sql` read straight from the database as the superuser (not through Gatehouse). */
async function direct(sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
  return (await shop.query(sql, params)).rows;
}

async function actions(ws: string) {
  return (await unary(h.decisions, h.decisions.listActions, { workspaceId: ws, pendingOnly: false })).actions;
}

/** Waits until `check` holds (service-kit's waitUntil); fails naming `what` and the last value seen. */
async function until<T>(what: string, get: () => Promise<T>, check: (v: T) => boolean, ms = DEADLINE_MS) {
  let last: T | undefined;
  try {
    const hit = await waitUntil(
      what,
      async () => {
        last = await get();
        return check(last) ? { value: last } : undefined;
      },
      { timeoutMs: ms, intervalMs: 200 },
    );
    return hit.value;
  } catch (err) {
    assert.fail(`${(err as Error).message}; last seen ${JSON.stringify(last)}`);
  }
}

const CUSTOMERS = "SELECT id, name, tier FROM customers ORDER BY id";
const ORIGINAL = [
  { id: 1, name: "Ada", tier: "gold" },
  { id: 2, name: "Bo", tier: "basic" },
  { id: 3, name: "Cy", tier: "basic" },
];
const CHANGED = [
  { id: 1, name: "Ada", tier: "gold" },
  { id: 2, name: "Bo", tier: "silver" },
  { id: 3, name: "Cy", tier: "silver" },
  { id: 4, name: "Di", tier: "gold" },
];

test("a snippet reads in pages (one observation each), its writes show in its own and the next snippet's reads but not in the database, the approver sees before/after rows, and approving applies them exactly once", async () => {
  const ws = await h.workspace("postgres://shop/shop#schema=sales");
  const observationsBefore = (await h.stack.store.readStream(`workspace-${ws}`)).filter(
    (e) => e.type === "ObservationRecorded",
  ).length;
  const r = await h.exec(
    ws,
    `export default async (env: any) => {
      const sql = "SELECT id, sku FROM products ORDER BY id";
      let page = await env.DB.query({ sql });
      const pages = [page.rows.length];
      let last = page.rows.at(-1);
      while (page.more) {
        page = await env.DB.query({ sql, offset: page.nextOffset });
        pages.push(page.rows.length);
        last = page.rows.at(-1);
      }
      const up = await env.DB.execute({ sql: "UPDATE customers SET tier = $1 WHERE id IN (2, 3)", params: ["silver"] });
      const ins = await env.DB.execute({ sql: "INSERT INTO customers (id, name, tier) VALUES ($1, $2, $3)", params: [4, "Di", "gold"] });
      const seen = await env.DB.query({ sql: ${JSON.stringify(CUSTOMERS)} });
      return { pages, last, up, ins, seen: seen.rows, pending: seen.pending };
    }`,
    120_000,
  );
  const got = returned<{
    pages: number[];
    last: unknown;
    up: { id: string; pending: boolean; rowCount: number };
    ins: { id: string; pending: boolean; rowCount: number };
    seen: unknown[];
    pending: string[];
  }>(r);
  assert.deepEqual(got.pages, [500, 500, 200], "1200 rows in pages of at most 500");
  assert.deepEqual(got.last, { id: 1200, sku: "sku-1200" });
  assert.equal(got.up.pending, true);
  assert.equal(got.up.rowCount, 2);
  assert.equal(got.ins.rowCount, 1);
  assert.deepEqual(got.seen, CHANGED, "a later read in the same snippet shows the pending writes");
  assert.deepEqual(got.pending, [got.up.id, got.ins.id]);

  // Every page read is an observation in the workspace's stream and in the action log.
  const observed = (await h.stack.store.readStream(`workspace-${ws}`)).filter(
    (e) => e.type === "ObservationRecorded",
  );
  assert.equal(observed.length - observationsBefore, 4, "three pages of products, one read of customers");
  const log = await unary(h.decisions, h.decisions.getLog, { workspaceId: ws });
  const logged = log.entries.flatMap((e) => (e.entry?.$case === "observation" ? [e.entry.observation] : []));
  assert.equal(logged.length, 4);
  for (const o of logged) {
    assert.equal(o.binding, "DB");
    assert.equal(o.description?.kind, "postgres.read");
    assert.equal(o.caller?.kind, "agent");
  }
  assert.equal(
    logged.filter((o) => /SELECT id, sku FROM products ORDER BY id/.test(o.description?.description ?? ""))
      .length,
    3,
    "each page's observation names the statement",
  );

  const next = returned(
    await h.exec(
      ws,
      `export default async (env: any) => (await env.DB.query({ sql: ${JSON.stringify(CUSTOMERS)} })).rows`,
    ),
  );
  assert.deepEqual(next, CHANGED, "the next snippet's read shows the pending writes");
  assert.deepEqual(
    await direct("SELECT id, name, tier FROM sales.customers ORDER BY id"),
    ORIGINAL,
    "the database has none of them yet",
  );

  // What the approver reads: the statement and each changed row before and after.
  const pendingActions = (await actions(ws)).filter((a) => a.status === ActionStatus.ACTION_STATUS_PENDING);
  assert.deepEqual(
    pendingActions.map((a) => a.localId),
    [got.up.id, got.ins.id],
  );
  const [up, ins] = pendingActions;
  assert.ok(up && ins);
  const upText = up.description?.description ?? "";
  assert.match(upText, /UPDATE customers SET tier = \$1 WHERE id IN \(2, 3\)/);
  assert.match(upText, /\["silver"\]/);
  assert.match(upText, /2 row\(s\) change/);
  assert.match(
    upText,
    /before: \{"id": 2, "name": "Bo", "tier": "basic"\}\n\s*after: {2}\{"id": 2, "name": "Bo", "tier": "silver"\}/,
  );
  assert.match(
    upText,
    /before: \{"id": 3, "name": "Cy", "tier": "basic"\}\n\s*after: {2}\{"id": 3, "name": "Cy", "tier": "silver"\}/,
  );
  assert.equal(up.description?.descriptionIsComplete, true);
  const insText = ins.description?.description ?? "";
  assert.match(insText, /INSERT INTO customers/);
  assert.match(insText, /\{"id": 4, "name": "Di", "tier": "gold"\}/);
  assert.deepEqual(ins.dependsOn, [up.id], "the insert follows the pending update of the same table");

  await unary(h.decisions, h.decisions.approve, {
    workspaceId: ws,
    actionId: ins.id,
    decidedBy: "user:dev-approver",
    includeDependencies: true,
    descriptionDigests: {},
  });
  const outcome = await untilFinal(h.decisions, ws, [up.id, ins.id], { stallMs: DEADLINE_MS });
  assert.deepEqual(
    [outcome.status.get(up.id), outcome.status.get(ins.id)],
    [ActionStatus.ACTION_STATUS_APPLIED, ActionStatus.ACTION_STATUS_APPLIED],
  );
  const applied = await until(
    "both actions applied in the action log",
    () => actions(ws),
    (all) =>
      [up.id, ins.id].every(
        (id) => all.find((a) => a.id === id)?.status === ActionStatus.ACTION_STATUS_APPLIED,
      ),
  );
  for (const id of [up.id, ins.id]) assert.equal(applied.find((a) => a.id === id)?.outcomeUnknown, false);
  assert.deepEqual(await direct("SELECT id, name, tier FROM sales.customers ORDER BY id"), CHANGED);
  assert.deepEqual(
    await direct("SELECT count(*)::int AS n FROM sales.customers WHERE id = 4"),
    [{ n: 1 }],
    "the insert landed exactly once",
  );
  assert.deepEqual(
    await direct(
      "SELECT action_id::int AS id FROM gatehouse.applied_actions WHERE workspace_id = $1 ORDER BY action_id",
      [ws],
    ),
    [{ id: up.id }, { id: ins.id }],
    "one apply marker per action",
  );
  const afterApply = returned<{ rows: unknown[]; pending: string[] }>(
    await h.exec(
      ws,
      `export default async (env: any) => env.DB.query({ sql: ${JSON.stringify(CUSTOMERS)} })`,
    ),
  );
  assert.deepEqual(afterApply.rows, CHANGED);
  assert.deepEqual(afterApply.pending, [], "applied writes are no longer replayed");
});

test("rejecting a write drops it and the write built on it (cascaded, naming the first) from later reads; the database never sees either", async () => {
  const ws = await h.workspace("postgres://shop/shop#table=sales.customers&table=sales.orders");
  const wrote = returned<{ customer: { id: string }; order: { id: string }; seen: unknown }>(
    await h.exec(
      ws,
      `export default async (env: any) => {
        const customer = await env.DB.execute({ sql: "INSERT INTO sales.customers (id, name) VALUES (20, 'Ed')" });
        const order = await env.DB.execute({ sql: "INSERT INTO sales.orders (id, customer_id, total) VALUES (30, 20, 5)" });
        const seen = await env.DB.query({ sql: "SELECT o.id, c.name FROM sales.orders o JOIN sales.customers c ON c.id = o.customer_id WHERE o.id = 30" });
        return { customer, order, seen: seen.rows };
      }`,
    ),
  );
  assert.deepEqual(wrote.seen, [{ id: 30, name: "Ed" }], "the snippet's own read shows both writes");
  const [customer, order] = (await actions(ws)).filter(
    (a) => a.status === ActionStatus.ACTION_STATUS_PENDING,
  );
  assert.ok(customer && order);
  assert.deepEqual([customer.localId, order.localId], [wrote.customer.id, wrote.order.id]);
  assert.deepEqual(order.dependsOn, [customer.id], "the order references the pending customer");

  const res = await unary(h.decisions, h.decisions.reject, {
    workspaceId: ws,
    actionId: customer.id,
    decidedBy: "user:dev-approver",
    reason: "no such customer",
  });
  const rejected = res.actions.find((a) => a.id === customer.id);
  assert.equal(rejected?.status, ActionStatus.ACTION_STATUS_REJECTED);
  assert.equal(rejected?.reason, "no such customer");
  const dropped = res.actions.find((a) => a.id === order.id);
  assert.equal(dropped?.status, ActionStatus.ACTION_STATUS_REJECTED);
  assert.equal(dropped?.cascadedFrom, customer.id, "the order was rejected as a dependent of the customer");
  assert.equal(dropped?.reason, `needed action ${customer.id}, which did not complete`);
  assert.equal(dropped?.decidedBy, "service:approval");

  // The gatekeeper hears of the rejection asynchronously (the lifecycle workflow notifies it).
  const later = await until(
    "a later snippet's read without the rejected writes",
    async () =>
      returned<{ rows: unknown[]; pending: string[] }>(
        await h.exec(
          ws,
          `export default async (env: any) => env.DB.query({ sql: "SELECT (SELECT count(*) FROM sales.customers WHERE id = 20)::int AS c, (SELECT count(*) FROM sales.orders WHERE id = 30)::int AS o" })`,
        ),
      ),
    (v) => v.pending.length === 0,
  );
  assert.deepEqual(later.rows, [{ c: 0, o: 0 }], "neither the customer nor its order shows");
  assert.deepEqual(
    await direct(
      "SELECT (SELECT count(*) FROM sales.customers WHERE id = 20)::int AS c, (SELECT count(*) FROM sales.orders WHERE id = 30)::int AS o",
    ),
    [{ c: 0, o: 0 }],
  );
  const final = await actions(ws);
  assert.equal(final.find((a) => a.id === order.id)?.cascadedFrom, customer.id);
});

/** A snippet that reads outside `#table=sales.customers` and returns what it caught. */
const OUTSIDE = `export default async (env: any) => {
  try { await env.DB.query({ sql: "WITH x AS (SELECT * FROM secret.keys) SELECT * FROM x" }); return { name: "", message: "not refused", stack: "" }; }
  catch (e: any) { return { name: e.name, message: e.message, stack: e.stack }; }
}`;

test("a read outside the resource's #table= scope comes back to the snippet as an error naming the table and why", async () => {
  const ws = await h.workspace("postgres://shop/shop#table=sales.customers");
  const r = await h.exec(
    ws,
    `export default async (env: any) => env.DB.query({ sql: "SELECT * FROM sales.orders WHERE id = 424242" })`,
  );
  assert.equal(r.ok, false);
  assert.match(
    r.error?.message ?? "",
    /^refused before reaching the database: relation sales\.orders is outside the granted scope \(tables sales\.customers\)$/,
  );
  const caught = returned<{ name: string; message: string; stack: string }>(await h.exec(ws, OUTSIDE));
  assert.match(
    caught.message,
    /^refused before reaching the database: relation secret\.keys is outside the granted scope \(tables sales\.customers\)$/,
  );
  // The stack the snippet sees is the error's first line: its kind, no frames of the gatekeeper's source.
  assert.equal(caught.stack, `StatementRefused: ${caught.message}`);
  const observations = (await h.stack.store.readStream(`workspace-${ws}`)).filter(
    (e) => e.type === "ObservationRecorded",
  );
  assert.equal(observations.length, 0, "a refused read records nothing");
  const log = await unary(h.decisions, h.decisions.getLog, { workspaceId: ws });
  assert.equal(log.entries.length, 0, "nothing in the action log either");
});

test("the refusal reaches the snippet under its own name (StatementRefused), caught or uncaught", async () => {
  const ws = await h.workspace("postgres://shop/shop#table=sales.customers");
  const caught = returned<{ name: string }>(await h.exec(ws, OUTSIDE));
  assert.equal(caught.name, "StatementRefused");
  const r = await h.exec(
    ws,
    `export default async (env: any) => env.DB.query({ sql: "SELECT 1 FROM sales.orders" })`,
  );
  assert.equal(r.ok, false);
  assert.equal(r.error?.name, "StatementRefused");
  const viaCatch = returned<string>(
    await h.exec(
      ws,
      `export default async (env: any) =>
        env.DB.query({ sql: "SELECT 1 FROM sales.orders" }).then(() => "resolved", (e: any) => e.name)`,
    ),
  );
  assert.equal(viaCatch, "StatementRefused");
});
