import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { runEventStoreConformance } from "@gatehouse/event-store/conformance";
import pg from "pg";
import { StoreSchemaMismatch, StoreUnavailable } from "../src/port.ts";
import { openPostgresEventStore } from "../src/postgres.ts";
import { migratePostgres, POSTGRES_SCHEMA_VERSION } from "../src/postgres-schema.ts";
import { type PostgresServer, startPostgresServer } from "../src/postgres-server.ts";

// A real PostgreSQL (Debian's package) on loopback, started here: the suite needs no server of its own.
const server: PostgresServer = await startPostgresServer();
after(() => server.stop());

async function migrate(url: string): Promise<number[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return await migratePostgres(client, url);
  } finally {
    await client.end();
  }
}

assert.deepEqual(await migrate(server.url), [POSTGRES_SCHEMA_VERSION]);

runEventStoreConformance("postgres", () => openPostgresEventStore(server.url));

describe("postgres: schema and reachability", () => {
  let emptyUrl: string;
  before(async () => {
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    await client.query("CREATE DATABASE empty_one");
    await client.end();
    emptyUrl = server.url.replace(/\/gatehouse$/, "/empty_one");
  });

  test("migrate again does nothing", async () => {
    assert.deepEqual(await migrate(server.url), []);
  });

  test("a database without the schema is refused naming the migrate command", async () => {
    await assert.rejects(openPostgresEventStore(emptyUrl), (error: Error) => {
      assert.ok(error instanceof StoreSchemaMismatch);
      assert.match(error.message, /no Gatehouse event-store schema: run gatehouse store migrate --url/);
      return true;
    });
  });

  test("an unreachable server is refused at open naming the URL, password redacted", async () => {
    const url = `postgres://app:s3cret@127.0.0.1:1/gatehouse`;
    await assert.rejects(openPostgresEventStore(url, { connectTimeoutMs: 2000 }), (error: Error) => {
      assert.ok(error instanceof StoreUnavailable);
      assert.match(error.message, /postgres:\/\/app:\*\*\*@127\.0\.0\.1:1\/gatehouse/);
      assert.doesNotMatch(error.message, /s3cret/);
      return true;
    });
  });
});
