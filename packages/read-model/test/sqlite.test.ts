import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { openEventStore } from "@gatehouse/event-store";
import { LogView } from "@gatehouse/proto";
import Database from "better-sqlite3";
import { startReadModel } from "../src/index.ts";
import { buildWorkspace, foldedLogBytes } from "./scenario.ts";
import { readModelSuite } from "./suite.ts";

const dir = mkdtempSync(join(tmpdir(), "gatehouse-rm-"));
after(() => rmSync(dir, { recursive: true, force: true }));

// Tables in the event store's own file, through a second connection.
readModelSuite("sqlite", async () => {
  const file = join(dir, "events.sqlite");
  const db = new Database(file);
  db.pragma("busy_timeout = 10000");
  return {
    openStore: () => openEventStore(`sqlite:${file}`),
    url: `sqlite:${file}`,
    async raw(sql, params = []) {
      const s = db.prepare(sql);
      if (s.reader) return s.all(...params) as Record<string, unknown>[];
      s.run(...params);
      return [];
    },
    async close() {
      db.close();
    },
  };
});

test("an in-memory read model (no url) is rebuilt from the streams at start", async () => {
  const store = await openEventStore("sqlite::memory:");
  try {
    await buildWorkspace(store, "mem1", { seed: 3, steps: 40 });
    const rm = await startReadModel({ store });
    try {
      const bytes = LogView.encode(await rm.logView("mem1")).finish();
      assert.equal(Buffer.compare(bytes, await foldedLogBytes(store, "mem1")), 0);
    } finally {
      await rm.close();
      await rm.close();
    }
  } finally {
    await store.close();
  }
});
