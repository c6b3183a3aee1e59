import assert from "node:assert/strict";
import { after, test } from "node:test";
import { workspaceStreamId } from "@gatehouse/approval-core";
import { openEventStore } from "@gatehouse/event-store";
import { type PostgresServer, startPostgresServer } from "@gatehouse/event-store/postgres-server";
import { LogView } from "@gatehouse/proto";
import pg from "pg";
import { startReadModel } from "../src/index.ts";
import { buildWorkspace, foldedLogBytes } from "./scenario.ts";
import { readModelSuite } from "./suite.ts";
import { until } from "./wait.ts";

// A real PostgreSQL (Debian's package) on loopback; the read model's tables live in the store's database.
const server: PostgresServer = await startPostgresServer({ migrate: true });
after(() => server.stop());

/** Runs SQL with `?` placeholders on the test server. */
async function raw(sql: string, params: unknown[] = []): Promise<Record<string, unknown>[]> {
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  try {
    let n = 0;
    return (
      await client.query(
        sql.replace(/\?/g, () => `$${++n}`),
        params,
      )
    ).rows;
  } finally {
    await client.end();
  }
}

readModelSuite("postgres", async () => ({
  openStore: () => openEventStore(server.url),
  url: server.url,
  raw,
  async close() {},
}));

test("two read models on one PostgreSQL: one leads; closing it, the other takes over and catches up", async () => {
  const store = await openEventStore(server.url);
  const a = await startReadModel({ store, url: server.url });
  const b = await startReadModel({ store, url: server.url });
  try {
    await buildWorkspace(store, "pg-lead-1", { seed: 11, steps: 30 });
    // Both answer (one projects, the other reads the tables and polls the checkpoint).
    for (const rm of [a, b]) {
      const bytes = LogView.encode(await rm.logView("pg-lead-1")).finish();
      assert.equal(Buffer.compare(bytes, await foldedLogBytes(store, "pg-lead-1")), 0);
    }
    const locks = await raw(
      "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND objid = ?",
      [7_420_117_002 % 2 ** 32],
    );
    assert.equal(Number(locks[0]?.n), 1, "exactly one replica holds the projector lock");
    // a or b leads; closing a and then b (with c started) hands the lock over at least once.
    await a.close();
    await buildWorkspace(store, "pg-lead-2", { seed: 12, steps: 30 });
    const head = await store.headPosition();
    await b.waitFor(head, 60_000);
    const bytes = LogView.encode(await b.logView("pg-lead-2")).finish();
    assert.equal(Buffer.compare(bytes, await foldedLogBytes(store, "pg-lead-2")), 0);
    // And the other way round: a new replica c, then b closes; c takes over.
    const c = await startReadModel({ store, url: server.url });
    try {
      await b.close();
      await buildWorkspace(store, "pg-lead-3", { seed: 13, steps: 10 });
      await c.waitFor(await store.headPosition(), 60_000);
      assert.equal(
        (await c.inbox(["pg-lead-3"], 5))[0]?.revision,
        await store.streamRevision(workspaceStreamId("pg-lead-3")),
      );
      await until(
        async () =>
          Number(
            (
              await raw(
                "SELECT count(*) AS n FROM pg_locks WHERE locktype = 'advisory' AND granted AND objid = ?",
                [7_420_117_002 % 2 ** 32],
              )
            )[0]?.n,
          ) === 1,
        "c holds the lock",
      );
    } finally {
      await c.close();
    }
  } finally {
    await a.close();
    await b.close();
    await store.close();
  }
});

test("an unreachable read-model database is StoreUnavailable naming the URL, password redacted", async () => {
  const store = await openEventStore("sqlite::memory:");
  try {
    await assert.rejects(
      startReadModel({ store, url: "postgres://app:s3cret@127.0.0.1:1/gatehouse" }),
      (error: Error) => {
        assert.equal(error.name, "StoreUnavailable");
        assert.match(error.message, /postgres:\/\/app:\*\*\*@127\.0\.0\.1:1\/gatehouse/);
        assert.doesNotMatch(error.message, /s3cret/);
        return true;
      },
    );
  } finally {
    await store.close();
  }
});
