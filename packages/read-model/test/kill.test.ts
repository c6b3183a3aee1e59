/**
 * Kill the projector mid-rebuild: a real child process projects 20 000 events into a durable read model
 * and is SIGKILLed once its checkpoint is past 0 and short of the head; started again it resumes from
 * the stored checkpoint (its log names the resume position), catches up, and the tables equal the fold.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, describe, test } from "node:test";
import { type EventStore, migratePostgres, openEventStore } from "@gatehouse/event-store";
import { type PostgresServer, startPostgresServer } from "@gatehouse/event-store/postgres-server";
import { LogView } from "@gatehouse/proto";
import Database from "better-sqlite3";
import pg from "pg";
import { startReadModel } from "../src/index.ts";
import { appendMany } from "./many-events.ts";
import { foldedLogBytes } from "./scenario.ts";
import { until } from "./wait.ts";

const FIXTURE = join(import.meta.dirname, "fixtures", "project.ts");
const EVENTS_PER_WORKSPACE = 500;
const WORKSPACES = 40;

interface Run {
  child: ChildProcess;
  lines: Record<string, unknown>[];
  exited: Promise<number | null>;
}

function project(storeUrl: string, url: string, mode: "rebuild" | "resume"): Run {
  const child = spawn(
    process.execPath,
    ["--no-node-snapshot", "--import", "tsx", FIXTURE, storeUrl, url, "50", mode],
    {
      cwd: join(import.meta.dirname, ".."),
      stdio: ["ignore", "pipe", "inherit"],
    },
  );
  const lines: Record<string, unknown>[] = [];
  let buffer = "";
  child.stdout?.on("data", (chunk: Buffer) => {
    buffer += chunk.toString();
    for (let i = buffer.indexOf("\n"); i >= 0; i = buffer.indexOf("\n")) {
      const line = buffer.slice(0, i);
      buffer = buffer.slice(i + 1);
      if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
    }
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (code) => resolve(code)));
  return { child, lines, exited };
}

async function killMidRebuild(
  storeUrl: string,
  url: string,
  checkpoint: () => Promise<number>,
  store: EventStore,
  ids: string[],
) {
  const head = await store.headPosition();
  assert.ok(head >= WORKSPACES * EVENTS_PER_WORKSPACE);
  const first = project(storeUrl, url, "rebuild");
  let at = 0;
  let exitedEarly = false;
  void first.exited.then(() => {
    exitedEarly = true;
  });
  // Poll the checkpoint table (no fixed sleep): kill as soon as the projection is under way.
  await until(async () => {
    if (exitedEarly) return true;
    at = await checkpoint().catch(() => 0);
    // Past 1000: ten workspaces have a first chunk stored, so the resumed run folds them mid-stream.
    return at >= 1000 && at < head;
  }, "the child's checkpoint past 1000 and short of the head");
  assert.equal(exitedEarly, false, "the child finished before it could be killed");
  first.child.kill("SIGKILL");
  assert.equal(await first.exited, null);
  const stored = await checkpoint();
  assert.ok(stored > 0 && stored < head, `stored checkpoint ${stored} is mid-rebuild (head ${head})`);

  const second = project(storeUrl, url, "resume");
  assert.equal(await second.exited, 0);
  const starts = second.lines.filter((l) => l.msg === "read model projecting");
  assert.equal(starts[0]?.from, stored, "resumed from the stored checkpoint, not 0");
  assert.equal(second.lines.find((l) => "caughtUp" in l)?.caughtUp, head);

  const rm = await startReadModel({ store, url });
  try {
    for (const ws of ids) {
      const bytes = LogView.encode(await rm.logView(ws)).finish();
      assert.equal(Buffer.compare(bytes, await foldedLogBytes(store, ws)), 0, ws);
    }
  } finally {
    await rm.close();
  }
  return { stored, head };
}

describe("kill the projector mid-rebuild", () => {
  test("SQLite file (tables in the event store's file)", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gatehouse-rm-kill-"));
    const file = join(dir, "events.sqlite");
    const store = await openEventStore(`sqlite:${file}`);
    try {
      const ids = await appendMany(store, "k", WORKSPACES, EVENTS_PER_WORKSPACE);
      // The tables exist before the child starts, so the parent can poll them.
      await (await startReadModel({ store, url: `sqlite:${file}` })).close();
      await store.close().catch(() => {});
      const reopened = await openEventStore(`sqlite:${file}`);
      const db = new Database(file, { readonly: true });
      db.pragma("busy_timeout = 10000");
      const checkpoint = async () =>
        Number(
          (
            db.prepare("SELECT position FROM gatehouse_rm_checkpoint WHERE name = 'projector'").get() as {
              position: number;
            }
          ).position,
        );
      try {
        const r = await killMidRebuild(`sqlite:${file}`, `sqlite:${file}`, checkpoint, reopened, ids);
        console.log(`# sqlite kill: resumed at ${r.stored} of ${r.head}`);
      } finally {
        db.close();
        await reopened.close();
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("PostgreSQL", async () => {
    const server: PostgresServer = await startPostgresServer({ migrate: true });
    after(() => server.stop());
    const store = await openEventStore(server.url);
    const client = new pg.Client({ connectionString: server.url });
    await client.connect();
    try {
      await migratePostgres(client, server.url);
      const ids = await appendMany(store, "k", WORKSPACES, EVENTS_PER_WORKSPACE);
      await (await startReadModel({ store, url: server.url })).close();
      const checkpoint = async () =>
        Number(
          (await client.query("SELECT position FROM gatehouse_rm_checkpoint WHERE name = 'projector'"))
            .rows[0]?.position,
        );
      const r = await killMidRebuild(server.url, server.url, checkpoint, store, ids);
      console.log(`# postgres kill: resumed at ${r.stored} of ${r.head}`);
    } finally {
      await client.end();
      await store.close();
    }
  });
});
