/**
 * The inbox benchmark (bench/read-model-inbox.ts) on both read-model backends: 10 000 pending
 * actions across 100 workspaces, seeded and then read through the read model. Checks that the
 * benchmark seeds what it says and reports a latency; the numbers themselves land in
 * docs/benchmarks.md through `npm run bench:inbox`.
 */
import assert from "node:assert/strict";
import { after, test } from "node:test";
import { migratePostgres } from "@gatehouse/event-store";
import { type PostgresServer, startPostgresServer } from "@gatehouse/event-store/postgres-server";
import pg from "pg";
import { benchInbox } from "../read-model-inbox.ts";

test("inbox latency: 10 000 pending actions across 100 workspaces (in-memory SQLite)", async () => {
  const r = await benchInbox({ workspaces: 100, pendingPerWorkspace: 100, iterations: 20 });
  console.log(`# inbox sqlite: ${JSON.stringify(r)}`);
  assert.equal(r.pendingActions, 10_000);
});

test("inbox latency: 10 000 pending actions across 100 workspaces (PostgreSQL store and read model)", async () => {
  // A real PostgreSQL (Debian's package) on loopback; the read model's tables live in the store's database.
  const server: PostgresServer = await startPostgresServer({ migrate: true });
  after(() => server.stop());
  const admin = new pg.Client({ connectionString: server.url });
  await admin.connect();
  await admin.query("CREATE DATABASE bench_rm");
  await admin.end();
  const url = server.url.replace(/\/gatehouse$/, "/bench_rm");
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  await migratePostgres(client, url);
  await client.end();
  const r = await benchInbox({
    storeUrl: url,
    readModelUrl: url,
    workspaces: 100,
    pendingPerWorkspace: 100,
    iterations: 20,
  });
  console.log(`# inbox postgres: ${JSON.stringify(r)}`);
  assert.equal(r.pendingActions, 10_000);
});
