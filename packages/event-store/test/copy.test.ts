/**
 * copyEventStore, migrateStore, verifyStore and sameStore against real SQLite files and a real
 * PostgreSQL started on loopback (postgres-server.ts).
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import Database from "better-sqlite3";
import pg from "pg";
import {
  CopyDiverged,
  type CopyProgress,
  CopySourceInvalid,
  copyEventStore,
  type EventStore,
  migrateStore,
  openPostgresEventStore,
  openSqliteEventStore,
  openStoreAt,
  type StoredEvent,
  StoreSchemaMismatch,
  StoreUnavailable,
  sameStore,
  verifyStore,
} from "../src/index.ts";
import { type PostgresServer, startPostgresServer } from "../src/postgres-server.ts";

const server: PostgresServer = await startPostgresServer();
const dir = mkdtempSync(join(tmpdir(), "gatehouse-copy-"));
after(async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

let databases = 0;
/** A new, empty database on the test server; migrated unless `migrated` is false. Returns its URL. */
async function freshDatabase(migrated = true): Promise<string> {
  const name = `copy_${++databases}`;
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  const url = server.url.replace(/\/gatehouse$/, `/${name}`);
  if (migrated) await migrateStore(url);
  return url;
}

let files = 0;
function sqlitePath(): string {
  return join(dir, `store-${++files}.sqlite`);
}

/** Streams with every metadata field set (callers, causation, pinned times, schema versions) and varied data. */
async function fillSource(store: EventStore, streams: number, eventsPerStream: number): Promise<void> {
  for (let s = 0; s < streams; s++) {
    const streamId = `workspace-${s}`;
    for (let from = 0; from < eventsPerStream; from += 37) {
      const n = Math.min(37, eventsPerStream - from);
      await store.append(
        streamId,
        Array.from({ length: n }, (_, k) => {
          const i = from + k;
          return {
            type: i % 3 === 0 ? "ActionSubmitted" : "ActionDecided",
            data: { i, text: `événement ${i} ✓`, nested: { list: [i, i / 4, null, true] } },
            metadata: {
              eventId: `ev-${s}-${i}`,
              occurredAt: new Date(Date.UTC(2025, 0, 1, 0, 0, i)).toISOString(),
              actor: `user:person-${i % 4}`,
              ...(i % 2 === 0 ? { caller: { kind: "agent", id: `chat-${s}` } } : {}),
              causationId: i > 0 ? `ev-${s}-${i - 1}` : "",
              correlationId: `corr-${s}`,
              schemaVersion: 1 + (i % 2),
              // Submissions traced (with tracing on), the rest not: both kinds copy with their hashes.
              ...(i % 3 === 0
                ? {
                    traceparent: `00-${(s * 100_000 + i + 1).toString(16).padStart(32, "0")}-${(i + 1).toString(16).padStart(16, "0")}-01`,
                  }
                : {}),
            },
          };
        }),
        from - 1,
      );
    }
  }
}

/** Every event of every stream, without global positions (the target numbers those itself). */
async function snapshot(store: EventStore): Promise<Map<string, Omit<StoredEvent, "globalPosition">[]>> {
  const out = new Map<string, Omit<StoredEvent, "globalPosition">[]>();
  for (const id of await store.listStreams())
    out.set(
      id,
      (await store.readStream(id)).map(({ globalPosition: _g, ...rest }) => rest),
    );
  return out;
}

async function assertSameEvents(source: EventStore, target: EventStore): Promise<void> {
  const a = await snapshot(source);
  const b = await snapshot(target);
  assert.deepEqual([...b.keys()], [...a.keys()], "same streams, in the same order");
  for (const [id, events] of a) {
    const copied = b.get(id) ?? [];
    assert.equal(copied.length, events.length, `${id}: event count`);
    events.forEach((e, i) => {
      assert.equal(copied[i]?.metadata.hash, e.metadata.hash, `${id}@${i}: hash`);
    });
    assert.deepEqual(copied, events, `${id}: ids, types, data and metadata`);
  }
  const verified = await verifyStore(target);
  assert.equal(verified.ok, true, JSON.stringify(verified.failed));
}

describe("copyEventStore", () => {
  test("sqlite → postgres → sqlite: every event with its id, metadata and hash; verify ok on each target", async () => {
    const source = openSqliteEventStore(sqlitePath());
    await fillSource(source, 4, 120);
    const pgUrl = await freshDatabase();
    const middle = await openPostgresEventStore(pgUrl);
    const progress: CopyProgress[] = [];
    const first = await copyEventStore(source, middle, { pageSize: 50, onProgress: (p) => progress.push(p) });
    assert.equal(first.streams, 4);
    assert.equal(first.eventsCopied, 480);
    assert.equal(first.eventsAlreadyPresent, 0);
    assert.ok(first.seconds >= 0);
    assert.deepEqual(
      progress.filter((p) => p.done).map((p) => [p.streamId, p.copied, p.revision]),
      [0, 1, 2, 3].map((s) => [`workspace-${s}`, 120, 119]),
    );
    assert.deepEqual(
      progress.filter((p) => !p.done && p.streamId === "workspace-0").map((p) => p.copied),
      [50, 100, 120],
      "one report per page of 50",
    );
    await assertSameEvents(source, middle);

    const back = openSqliteEventStore(sqlitePath());
    const second = await copyEventStore(middle, back);
    assert.equal(second.eventsCopied, 480);
    await assertSameEvents(middle, back);
    await assertSameEvents(source, back);

    const again = await copyEventStore(middle, back);
    assert.deepEqual(
      [again.eventsCopied, again.eventsAlreadyPresent],
      [0, 480],
      "a finished copy appends nothing",
    );
    await Promise.all([source.close(), middle.close(), back.close()]);
  });

  test("an interrupted copy re-run continues where each target stream ends: no duplicates, verify ok", async () => {
    const source = openSqliteEventStore(sqlitePath());
    await fillSource(source, 3, 90);
    const target = await openPostgresEventStore(await freshDatabase());
    const stop = new AbortController();
    let seen = 0;
    await assert.rejects(
      copyEventStore(source, target, {
        pageSize: 20,
        signal: stop.signal,
        onProgress: (p) => {
          if (!p.done) seen += 20;
          if (seen >= 120) stop.abort(new Error("interrupted by the test"));
        },
      }),
      /interrupted by the test/,
    );
    const partial = await target.headPosition();
    assert.ok(partial > 0 && partial < 270, `partly copied (${partial} of 270)`);
    const resumed = await copyEventStore(source, target, { pageSize: 20 });
    assert.equal(resumed.eventsAlreadyPresent, partial);
    assert.equal(resumed.eventsCopied, 270 - partial);
    assert.equal(await target.headPosition(), 270, "no event stored twice");
    await assertSameEvents(source, target);
    await Promise.all([source.close(), target.close()]);
  });

  test("a target stream that differs from the source is refused naming the stream and revision, and left as it was", async () => {
    const source = openSqliteEventStore(sqlitePath());
    await fillSource(source, 2, 10);
    const target = openSqliteEventStore(sqlitePath());
    // workspace-1 on the target: the same first 4 events, then another one at revision 4.
    const head = await source.readStream("workspace-1", { maxCount: 4 });
    await target.append(
      "workspace-1",
      head.map((e) => {
        const { prevHash: _p, hash: _h, ...metadata } = e.metadata;
        return { type: e.type, data: e.data, metadata };
      }),
      "no_stream",
    );
    await target.append("workspace-1", [{ type: "Other", data: { local: true } }], 3);
    await assert.rejects(copyEventStore(source, target), (error: Error) => {
      assert.ok(error instanceof CopyDiverged, String(error));
      assert.equal(error.streamId, "workspace-1");
      assert.equal(error.revision, 4);
      assert.match(error.message, /^stream workspace-1: the target differs from the source at revision 4 /);
      return true;
    });
    assert.equal(await target.streamRevision("workspace-1"), 4, "nothing overwritten or added");

    // A target with more events than the source is refused too.
    const longer = openSqliteEventStore(sqlitePath());
    await copyEventStore(source, longer);
    await longer.append("workspace-0", [{ type: "Extra", data: {} }], 9);
    await assert.rejects(copyEventStore(source, longer), (error: Error) => {
      assert.ok(error instanceof CopyDiverged);
      assert.equal(error.revision, 10);
      assert.match(error.message, /the target has 11 events, the source only 10/);
      return true;
    });
    await Promise.all([source.close(), target.close(), longer.close()]);
  });

  test("a source event edited behind the store's back is not copied", async () => {
    const path = sqlitePath();
    const writer = openSqliteEventStore(path);
    await fillSource(writer, 1, 5);
    await writer.close();
    const raw = new Database(path);
    raw
      .prepare("UPDATE events SET data = ? WHERE stream_id = ? AND revision = 2")
      .run(JSON.stringify({ i: 2, forged: true }), "workspace-0");
    raw.close();
    const source = openSqliteEventStore(path);
    const target = openSqliteEventStore(sqlitePath());
    await assert.rejects(copyEventStore(source, target), (error: Error) => {
      assert.ok(error instanceof CopySourceInvalid);
      assert.equal(error.revision, 2);
      assert.match(error.message, /hash does not match its content/);
      return true;
    });
    assert.equal(
      await target.streamRevision("workspace-0"),
      -1,
      "the page with the bad event was not appended",
    );
    await Promise.all([source.close(), target.close()]);
  });
});

describe("migrateStore, openStoreAt, sameStore, verifyStore", () => {
  test("postgres: migrate creates the schema, again does nothing; the services' schema check then passes", async () => {
    const url = await freshDatabase(false);
    await assert.rejects(openPostgresEventStore(url), StoreSchemaMismatch);
    const first = await migrateStore(url);
    assert.deepEqual([first.backend, first.before, first.after, first.applied], ["postgres", 0, 1, [1]]);
    const second = await migrateStore(url);
    assert.deepEqual([second.before, second.after, second.applied], [1, 1, []]);
    assert.match(second.message, /schema version 1 is current/);
    const store = await openPostgresEventStore(url);
    await store.close();
  });

  test("sqlite migrates itself on open; kurrentdb has no schema but an absent server still fails; a bad URL names the accepted forms", async () => {
    const path = sqlitePath();
    const report = await migrateStore(`sqlite:${path}`);
    assert.equal(report.backend, "sqlite");
    assert.match(report.message, /creates and upgrades its table itself/);
    const store = await openStoreAt(`sqlite:${path}`);
    assert.deepEqual(await store.listStreams(), []);
    await store.close();
    await assert.rejects(migrateStore("kurrentdb://admin:s3cret@127.0.0.1:1?tls=false"), (error: Error) => {
      assert.ok(error instanceof StoreUnavailable, String(error));
      assert.doesNotMatch(error.message, /s3cret/);
      return true;
    });
    await assert.rejects(migrateStore("mysql://u:pw@h/db"), /not one of sqlite:<path>, postgres:\/\//);
  });

  test("an unreachable server is StoreUnavailable naming the URL without its password", async () => {
    const url = "postgres://app:s3cret@127.0.0.1:1/gatehouse";
    for (const attempt of [() => migrateStore(url, { connectTimeoutMs: 5000 }), () => openStoreAt(url)]) {
      await assert.rejects(attempt(), (error: Error) => {
        assert.ok(error instanceof StoreUnavailable, String(error));
        assert.match(error.message, /postgres:\/\/app:\*\*\*@127\.0\.0\.1:1\/gatehouse/);
        assert.doesNotMatch(error.message, /s3cret/);
        return true;
      });
    }
  });

  test("openStoreAt refuses a SQLite source that does not exist instead of creating it", async () => {
    const missing = join(dir, "missing.sqlite");
    await assert.rejects(openStoreAt(`sqlite:${missing}`), /no SQLite event store at .*missing\.sqlite/);
    const created = await openStoreAt(`sqlite:${missing}`, { create: true });
    await created.close();
  });

  test("sameStore: the same file by another spelling, the same database with other credentials", () => {
    assert.ok(sameStore(`sqlite:${dir}/a.sqlite`, `sqlite://${dir}/./a.sqlite`));
    assert.ok(!sameStore(`sqlite:${dir}/a.sqlite`, `sqlite:${dir}/b.sqlite`));
    assert.ok(sameStore("postgres://a:x@DB:5432/g", "postgresql://b@db/g?sslmode=disable"));
    assert.ok(!sameStore("postgres://db/g", "postgres://db/h"));
    assert.ok(!sameStore("postgres://db:5432/g", "postgres://db:5433/g"));
  });

  test("verifyStore names the stream, revision and problem of an event edited in the SQLite file", async () => {
    const path = sqlitePath();
    const writer = openSqliteEventStore(path);
    await fillSource(writer, 3, 6);
    await writer.close();
    const raw = new Database(path);
    raw.prepare("UPDATE events SET type = 'Forged' WHERE stream_id = 'workspace-1' AND revision = 3").run();
    raw.close();
    const store = openSqliteEventStore(path);
    const seen: string[] = [];
    const result = await verifyStore(store, { onStream: (s) => seen.push(`${s.streamId}:${s.ok}`) });
    assert.deepEqual(seen, ["workspace-0:true", "workspace-1:false", "workspace-2:true"]);
    assert.equal(result.ok, false);
    assert.equal(result.streams, 3);
    assert.equal(result.failed.length, 1);
    assert.equal(result.failed[0]?.streamId, "workspace-1");
    assert.equal(result.failed[0]?.firstBadRevision, 3);
    assert.match(result.failed[0]?.problem ?? "", /revision 3: metadata.hash does not match/);
    const one = await verifyStore(store, { streams: ["workspace-2"] });
    assert.deepEqual([one.ok, one.streams, one.eventsChecked], [true, 1, 6]);
    await store.close();
  });
});
