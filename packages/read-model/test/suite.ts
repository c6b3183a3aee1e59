/** The read-model suite, run on each SQL backend (sqlite.test.ts, postgres.test.ts). */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import {
  ActionNotFound,
  foldEvents,
  toLogView,
  WorkspaceNotFound,
  workspaceStreamId,
} from "@gatehouse/approval-core";
import type { EventStore } from "@gatehouse/event-store";
import { ActionDetailView, InboxWorkspaceView, LogView } from "@gatehouse/proto";
import { type ReadModel, ReadModelBehind, startReadModel } from "../src/index.ts";
import { detailOracle, inboxOracle } from "./oracle.ts";
import { buildWorkspace, foldedLogBytes } from "./scenario.ts";

/** What a backend gives the suite: a store, the read-model URL, and raw SQL on the read model's database. */
export interface SuiteBackend {
  /** A fresh event store (each call: the same database, a new connection). */
  openStore(): Promise<EventStore>;
  /** The read-model URL (durable: a restart keeps the tables). */
  url: string;
  /** Runs SQL (with `?` placeholders) on the read model's database. */
  raw(sql: string, params?: unknown[]): Promise<Record<string, unknown>[]>;
  close(): Promise<void>;
}

const WORKSPACES = ["alpha", "bravo", "charlie", "delta", "echo"];

async function foldedView(store: EventStore, ws: string): Promise<LogView> {
  return toLogView(foldEvents(await store.readStream(workspaceStreamId(ws))));
}

/** Byte equality of every workspace's log view with the fold of its stream. */
async function assertEqualsFold(rm: ReadModel, store: EventStore, prefix: string): Promise<void> {
  for (const w of WORKSPACES) {
    const ws = `${prefix}${w}`;
    const mine = LogView.encode(await rm.logView(ws)).finish();
    const folded = await foldedLogBytes(store, ws);
    assert.equal(Buffer.compare(mine, folded), 0, `${ws}: read model differs from the folded stream`);
  }
}

/** Registers the suite for one backend. */
export function readModelSuite(name: string, makeBackend: () => Promise<SuiteBackend>): void {
  describe(`read model on ${name}`, () => {
    let backend: SuiteBackend;
    let store: EventStore;
    const prefix = `${name}-`;
    before(async () => {
      backend = await makeBackend();
      store = await backend.openStore();
      // A stream the read model must ignore, interleaved with the workspaces.
      await store.append("kernel-registry", [{ type: "Noise", data: {} }], "any");
      for (const [i, w] of WORKSPACES.entries())
        await buildWorkspace(store, `${prefix}${w}`, { seed: 1000 + i, steps: 90, latch: i % 2 === 0 });
    });
    after(async () => {
      await store.close();
      await backend.close();
    });

    test("the log equals the folded stream byte for byte; after rebuild too", async () => {
      const rm = await startReadModel({ store, url: backend.url });
      try {
        await assertEqualsFold(rm, store, prefix);
        assert.equal(await rm.checkpoint(), await store.headPosition());
        await rm.rebuild();
        assert.equal(await rm.checkpoint(), await store.headPosition());
        await assertEqualsFold(rm, store, prefix);
      } finally {
        await rm.close();
      }
    });

    test("the mix exercises every kind of entry and status", async () => {
      const views = await Promise.all(WORKSPACES.map((w) => foldedView(store, `${prefix}${w}`)));
      const cases = new Set(views.flatMap((v) => v.entries.map((e) => e.entry?.$case)));
      assert.deepEqual([...cases].sort(), ["action", "observation", "refusal"]);
      const statuses = new Set(
        views.flatMap((v) =>
          v.entries.flatMap((e) => (e.entry?.$case === "action" ? [e.entry.action.status] : [])),
        ),
      );
      for (const s of [1, 2, 4, 5, 6]) assert.ok(statuses.has(s), `status ${s} present`);
      assert.ok(views.some((v) => v.latched));
      assert.ok(views.some((v) => v.rules.length > 0));
      const chatted = views.flatMap((v) =>
        v.entries.filter((e) => e.entry?.$case === "action" && e.entry.action.chatStartedBy !== ""),
      );
      assert.ok(chatted.length > 0, "some entries carry chatStartedBy");
      assert.ok(
        views.some((v) =>
          v.entries.some((e) => e.entry?.$case === "action" && e.entry.action.cascadedFrom > 0),
        ),
        "a cascade",
      );
      assert.ok(
        views.some((v) =>
          v.entries.some((e) => e.entry?.$case === "action" && e.entry.action.dependsOn.length > 0),
        ),
        "dependencies",
      );
    });

    test("a crash between a batch's rows and its checkpoint: restart re-projects, nothing doubled", async () => {
      let rm = await startReadModel({ store, url: backend.url });
      const head = await store.headPosition();
      await rm.waitFor(head);
      await rm.close();
      // Rows of every event are stored, the checkpoint says only half: what a crash after the rows
      // and before the checkpoint would leave (were they not one transaction).
      const half = Math.floor(head / 2);
      await backend.raw("UPDATE gatehouse_rm_checkpoint SET position = ? WHERE name = 'projector'", [half]);
      const before = await backend.raw("SELECT count(*) AS n FROM gatehouse_rm_entries");
      rm = await startReadModel({ store, url: backend.url });
      try {
        await assertEqualsFold(rm, store, prefix);
        assert.equal(await rm.checkpoint(), head);
        const afterRows = await backend.raw("SELECT count(*) AS n FROM gatehouse_rm_entries");
        assert.equal(Number(afterRows[0]?.n), Number(before[0]?.n));
        const entries = (await Promise.all(WORKSPACES.map((w) => foldedView(store, `${prefix}${w}`)))).reduce(
          (n, v) => n + v.entries.length,
          0,
        );
        assert.equal(Number(afterRows[0]?.n), entries);
        const edges = await backend.raw("SELECT count(*) AS n FROM gatehouse_rm_depends");
        const folded = (await Promise.all(WORKSPACES.map((w) => foldedView(store, `${prefix}${w}`)))).reduce(
          (n, v) =>
            n +
            v.entries.reduce(
              (m, e) => m + (e.entry?.$case === "action" ? e.entry.action.dependsOn.length : 0),
              0,
            ),
          0,
        );
        assert.equal(Number(edges[0]?.n), folded);
      } finally {
        await rm.close();
      }
      // And rows of a later batch missing with the checkpoint past them is impossible; rows present with
      // workspace rows behind them (an older writer): upserts land on the same keys.
      await backend.raw("UPDATE gatehouse_rm_workspaces SET revision = 0");
      await backend.raw("UPDATE gatehouse_rm_checkpoint SET position = 0 WHERE name = 'projector'");
      rm = await startReadModel({ store, url: backend.url });
      try {
        await assertEqualsFold(rm, store, prefix);
      } finally {
        await rm.close();
      }
    });

    test("inbox, action detail and log pages equal the gateway's views of the folded log", async () => {
      const rm = await startReadModel({ store, url: backend.url });
      try {
        const ids = [...WORKSPACES.map((w) => `${prefix}${w}`).reverse(), "nope"];
        for (const limit of [0, 3, 1000]) {
          const inbox = await rm.inbox(ids, limit);
          assert.deepEqual(
            inbox.map((v) => v.workspaceId),
            ids.slice(0, -1),
            "request order kept, unknown left out",
          );
          for (const view of inbox) {
            const want = inboxOracle(await foldedView(store, view.workspaceId), view.workspaceId, limit);
            assert.deepEqual(InboxWorkspaceView.toJSON(view), InboxWorkspaceView.toJSON(want));
          }
        }
        let details = 0;
        for (const w of WORKSPACES) {
          const ws = `${prefix}${w}`;
          const log = await foldedView(store, ws);
          for (const e of log.entries) {
            const want = detailOracle(log, e.id);
            if (!want) {
              await assert.rejects(rm.actionDetail(ws, e.id), ActionNotFound);
              continue;
            }
            details++;
            assert.deepEqual(
              ActionDetailView.toJSON(await rm.actionDetail(ws, e.id)),
              ActionDetailView.toJSON(want),
            );
          }
          for (const size of [1, 7, 5000]) {
            const seen: number[] = [];
            let after = 0;
            for (;;) {
              const page = await rm.logPage(ws, after, size);
              assert.ok((page.view?.entries.length ?? 0) <= size);
              assert.equal(page.view?.revision, log.revision);
              assert.deepEqual(page.view?.rules, log.rules);
              seen.push(...(page.view?.entries.map((x) => x.id) ?? []));
              if (page.nextAfterId === 0) break;
              after = page.nextAfterId;
            }
            assert.deepEqual(
              seen,
              log.entries.map((x) => x.id),
              `pages of ${size} cover the log once`,
            );
          }
        }
        assert.ok(details > 50);
        await assert.rejects(rm.logView("nope"), WorkspaceNotFound);
        await assert.rejects(rm.logPage("nope", 0, 10), WorkspaceNotFound);
        await assert.rejects(rm.actionDetail("nope", 1), WorkspaceNotFound);
      } finally {
        await rm.close();
      }
    });

    test("read-your-writes: a query right after an append reflects it", async () => {
      const rm = await startReadModel({ store, url: backend.url });
      try {
        const ws = `${prefix}ryw`;
        await buildWorkspace(store, ws, { seed: 7, steps: 5 });
        for (let i = 0; i < 20; i++) {
          await buildWorkspace(store, `${ws}-${i}`, { seed: i, steps: 3 });
          const [view] = await rm.inbox([`${ws}-${i}`], 10);
          assert.equal(view?.revision, await store.streamRevision(workspaceStreamId(`${ws}-${i}`)));
          const bytes = LogView.encode(await rm.logView(`${ws}-${i}`)).finish();
          assert.equal(Buffer.compare(bytes, await foldedLogBytes(store, `${ws}-${i}`)), 0);
        }
      } finally {
        await rm.close();
      }
    });

    test("waitFor past the head fails with ReadModelBehind naming positions and timeout", async () => {
      const rm = await startReadModel({ store, url: backend.url });
      try {
        const head = await store.headPosition();
        await rm.waitFor(head);
        await assert.rejects(rm.waitFor(head + 10, 100), (error: Error) => {
          assert.ok(error instanceof ReadModelBehind);
          assert.equal(error.checkpoint, head);
          assert.equal(error.wanted, head + 10);
          assert.match(error.message, /100 ms/);
          return true;
        });
      } finally {
        await rm.close();
      }
    });
  });
}
