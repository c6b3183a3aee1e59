import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import Database from "better-sqlite3";
import {
  type EventStore,
  eventHash,
  openSqliteEventStore,
  type StoredMetadata,
  verifyStream,
} from "../src/index.ts";

const STREAM = "workspace-verify";

/** Writes a 5-event stream to a fresh file, lets `tamper` edit the file with a raw connection, then verifies. */
async function verifyAfter(dir: string, name: string, tamper: (db: Database.Database) => void) {
  const path = join(dir, `${name}.db`);
  const writer = openSqliteEventStore(path);
  await writer.append(
    STREAM,
    [0, 1, 2].map((n) => ({ type: "Step", data: { n, text: `step ${n}` } })),
    "no_stream",
  );
  await writer.append(
    STREAM,
    [3, 4].map((n) => ({ type: "Step", data: { n } })),
    2,
  );
  await writer.append("workspace-other", [{ type: "Other", data: {} }], "no_stream");
  await writer.close();
  const raw = new Database(path);
  tamper(raw);
  raw.close();
  const reader: EventStore = openSqliteEventStore(path);
  try {
    return await verifyStream(reader, STREAM);
  } finally {
    await reader.close();
  }
}

function rowMetadata(db: Database.Database, revision: number): Record<string, unknown> {
  const row = db
    .prepare("SELECT metadata FROM events WHERE stream_id = ? AND revision = ?")
    .get(STREAM, revision) as {
    metadata: string;
  };
  return JSON.parse(row.metadata) as Record<string, unknown>;
}

describe("verifyStream on a SQLite file edited behind the store's back", () => {
  let dir: string;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), "gatehouse-verify-"));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  test("an untouched stream verifies: every event checked, no problem, lastHash of the last event", async () => {
    const result = await verifyAfter(dir, "clean", () => {});
    assert.equal(result.ok, true);
    assert.equal(result.eventsChecked, 5);
    assert.equal(result.firstBadRevision, -1);
    assert.equal(result.problem, "");
    assert.match(result.lastHash, /^[0-9a-f]{64}$/);
  });

  test("editing one event's data is reported at that revision", async () => {
    const result = await verifyAfter(dir, "data", (db) => {
      db.prepare("UPDATE events SET data = ? WHERE stream_id = ? AND revision = 2").run(
        '{"n":2,"text":"evil"}',
        STREAM,
      );
    });
    assert.equal(result.ok, false);
    assert.equal(result.firstBadRevision, 2);
    assert.equal(result.eventsChecked, 3);
    assert.match(result.problem, /revision 2: metadata.hash does not match/);
  });

  test("editing one event's type is reported at that revision", async () => {
    const result = await verifyAfter(dir, "type", (db) => {
      db.prepare("UPDATE events SET type = 'Other' WHERE stream_id = ? AND revision = 1").run(STREAM);
    });
    assert.equal(result.firstBadRevision, 1);
    assert.equal(result.ok, false);
  });

  test("editing one event's metadata (actor) is reported at that revision", async () => {
    const result = await verifyAfter(dir, "meta", (db) => {
      const metadata = { ...rowMetadata(db, 3), actor: "mallory" };
      db.prepare("UPDATE events SET metadata = ? WHERE stream_id = ? AND revision = 3").run(
        JSON.stringify(metadata),
        STREAM,
      );
    });
    assert.equal(result.firstBadRevision, 3);
  });

  test("re-hashing an edited event to hide the edit breaks the next event's prevHash", async () => {
    const result = await verifyAfter(dir, "rehash", (db) => {
      const data = { n: 1, text: "forged" };
      const { hash: _old, ...withoutHash } = rowMetadata(db, 1) as unknown as StoredMetadata;
      const metadata = { ...withoutHash, hash: eventHash("Step", data, withoutHash) };
      db.prepare("UPDATE events SET data = ?, metadata = ? WHERE stream_id = ? AND revision = 1").run(
        JSON.stringify(data),
        JSON.stringify(metadata),
        STREAM,
      );
    });
    assert.equal(result.ok, false);
    assert.equal(result.firstBadRevision, 2);
    assert.match(result.problem, /revision 2: metadata.prevHash does not match/);
  });

  test("a broken prevHash link is reported at the event carrying it", async () => {
    const result = await verifyAfter(dir, "prevhash", (db) => {
      const metadata = { ...rowMetadata(db, 4), prevHash: "f".repeat(64) };
      db.prepare("UPDATE events SET metadata = ? WHERE stream_id = ? AND revision = 4").run(
        JSON.stringify(metadata),
        STREAM,
      );
    });
    assert.equal(result.firstBadRevision, 4);
    assert.match(result.problem, /prevHash does not match/);
  });

  test("a deleted event shows as a revision gap", async () => {
    const result = await verifyAfter(dir, "deleted", (db) => {
      db.prepare("DELETE FROM events WHERE stream_id = ? AND revision = 2").run(STREAM);
    });
    assert.equal(result.ok, false);
    assert.equal(result.firstBadRevision, 2);
    assert.match(result.problem, /revision 2 is missing/);
  });

  test("deleting the first event is caught as well", async () => {
    const result = await verifyAfter(dir, "deleted-first", (db) => {
      db.prepare("DELETE FROM events WHERE stream_id = ? AND revision = 0").run(STREAM);
    });
    assert.equal(result.firstBadRevision, 0);
  });
});
