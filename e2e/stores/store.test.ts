/**
 * `gatehouse store migrate|copy|verify` run as processes (src/main.ts through tsx) against real SQLite
 * files and a real PostgreSQL on loopback: copies both ways with the source's hashes, a copy killed
 * mid-way and run again, a diverged target, migrate twice, a tampered event, an unreachable server.
 */
import assert from "node:assert/strict";
import { execFile, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, test } from "node:test";
import { promisify } from "node:util";
import {
  type EventStore,
  openPostgresEventStore,
  openSqliteEventStore,
  type StoredEvent,
} from "@gatehouse/event-store";
import { type PostgresServer, startPostgresServer } from "@gatehouse/event-store/postgres-server";
import { waitUntil } from "@gatehouse/service-kit";
import Database from "better-sqlite3";
import pg from "pg";

const ROOT = resolve(import.meta.dirname, "../..");
const MAIN = join(ROOT, "apps/cli/src/main.ts");
const CLI = ["--no-node-snapshot", "--import", "tsx", MAIN];
const exec = promisify(execFile);

const server: PostgresServer = await startPostgresServer();
const dir = mkdtempSync(join(tmpdir(), "gatehouse-store-cli-"));
after(async () => {
  await server.stop();
  rmSync(dir, { recursive: true, force: true });
});

interface Ran {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs `gatehouse <args>`; never throws on a non-zero exit. */
async function gatehouse(...args: string[]): Promise<Ran> {
  try {
    const { stdout, stderr } = await exec(process.execPath, [...CLI, ...args], {
      cwd: ROOT,
      timeout: 180_000,
      maxBuffer: 16 * 1024 * 1024,
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    if (typeof e.code !== "number") throw err;
    return { code: e.code, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

/** The JSON lines a `--json` copy printed. */
function jsonLines(stdout: string): Array<Record<string, unknown>> {
  return stdout
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

let databases = 0;
/** A new empty database on the test server (no schema): its URL. */
async function freshDatabase(): Promise<string> {
  const name = `cli_${++databases}`;
  const client = new pg.Client({ connectionString: server.url });
  await client.connect();
  await client.query(`CREATE DATABASE ${name}`);
  await client.end();
  return server.url.replace(/\/gatehouse$/, `/${name}`);
}

let files = 0;
function sqlitePath(): string {
  return join(dir, `store-${++files}.sqlite`);
}

/** A SQLite store with `streams` streams of `perStream` events, every metadata field set. */
async function sourceFile(streams: number, perStream: number): Promise<string> {
  const path = sqlitePath();
  const store = openSqliteEventStore(path);
  for (let s = 0; s < streams; s++) {
    for (let from = 0; from < perStream; from += 100) {
      const n = Math.min(100, perStream - from);
      await store.append(
        `workspace-${s}`,
        Array.from({ length: n }, (_, k) => {
          const i = from + k;
          return {
            type: i % 2 ? "ActionDecided" : "ActionSubmitted",
            data: { i, title: `write ${i} — ✓`, ids: [s, i] },
            metadata: {
              eventId: `e-${s}-${i}`,
              occurredAt: new Date(Date.UTC(2025, 5, 1, 12, 0, i % 60, i % 1000)).toISOString(),
              actor: `user:p${i % 3}`,
              ...(i % 3 === 0 ? { caller: { kind: "agent", id: `chat-${s}` } } : {}),
              causationId: `c-${i}`,
              correlationId: `r-${s}`,
              schemaVersion: 1 + (i % 2),
            },
          };
        }),
        from - 1,
      );
    }
  }
  await store.close();
  return path;
}

async function allEvents(store: EventStore): Promise<Array<Omit<StoredEvent, "globalPosition">>> {
  const out: Array<Omit<StoredEvent, "globalPosition">> = [];
  for (const id of await store.listStreams())
    for (const { globalPosition: _g, ...e } of await store.readStream(id)) out.push(e);
  return out;
}

/** Same streams, event ids, types, data, metadata and hashes, event for event. */
async function assertSameEvents(a: EventStore, b: EventStore): Promise<void> {
  const [x, y] = await Promise.all([allEvents(a), allEvents(b)]);
  assert.equal(y.length, x.length, "event count");
  for (const [i, e] of x.entries())
    assert.equal(y[i]?.metadata.hash, e.metadata.hash, `${e.streamId}@${e.revision}`);
  assert.deepEqual(y, x);
}

function assertNoStack(r: Ran): void {
  assert.doesNotMatch(r.stderr, /\n\s+at /, `no stack trace: ${r.stderr}`);
}

test("store migrate on PostgreSQL prints the versions, does nothing the second time, and services open the store afterwards", async () => {
  const url = await freshDatabase();
  await assert.rejects(
    openPostgresEventStore(url),
    /no Gatehouse event-store schema: run gatehouse store migrate/,
  );
  const first = await gatehouse("store", "migrate", "--url", url);
  assert.equal(first.code, 0, first.stderr);
  assert.match(first.stdout, /schema version before: 0\napplied: 1\nschema version after: 1\n/);
  const second = await gatehouse("store", "migrate", "--url", url, "--json");
  assert.equal(second.code, 0, second.stderr);
  const report = JSON.parse(second.stdout) as { before: number; after: number; applied: number[] };
  assert.deepEqual([report.before, report.after, report.applied], [1, 1, []]);
  const store = await openPostgresEventStore(url);
  await store.close();

  const sqlite = await gatehouse("store", "migrate", "--url", `sqlite:${sqlitePath()}`);
  assert.equal(sqlite.code, 0, sqlite.stderr);
  assert.match(sqlite.stdout, /migrates|creates and upgrades its table itself/);
  // No KurrentDB server here: a pre-flight migrate must fail, not report "nothing to migrate".
  const kurrent = await gatehouse("store", "migrate", "--url", "kurrentdb://127.0.0.1:1?tls=false");
  assert.equal(kurrent.code, 1, kurrent.stdout);
  assert.match(kurrent.stderr, /kurrentdb:\/\/127\.0\.0\.1:1/);
  const bad = await gatehouse("store", "migrate", "--url", "mysql://u:pw@db/x");
  assert.notEqual(bad.code, 0);
  assert.match(
    bad.stderr,
    /is not one of sqlite:<path>, postgres:\/\/user:password@host:5432\/db, kurrentdb:\/\//,
  );
  assertNoStack(bad);
});

test("store copy sqlite → postgres → sqlite keeps every event and hash; verify passes on both targets", async () => {
  const sourcePath = await sourceFile(5, 130);
  const pgUrl = await freshDatabase();
  assert.equal((await gatehouse("store", "migrate", "--url", pgUrl)).code, 0);
  const toPg = await gatehouse("store", "copy", "--from", `sqlite:${sourcePath}`, "--to", pgUrl, "--json");
  assert.equal(toPg.code, 0, toPg.stderr);
  const lines = jsonLines(toPg.stdout);
  assert.deepEqual(
    lines.slice(0, -1).map((l) => [l.stream, l.copied, l.revision]),
    [0, 1, 2, 3, 4].map((s) => [`workspace-${s}`, 130, 129]),
  );
  assert.deepEqual(
    [
      lines.at(-1)?.done,
      lines.at(-1)?.streams,
      lines.at(-1)?.eventsCopied,
      lines.at(-1)?.eventsAlreadyPresent,
    ],
    [true, 5, 650, 0],
  );
  assert.equal(typeof lines.at(-1)?.seconds, "number");

  const backPath = sqlitePath();
  const toSqlite = await gatehouse("store", "copy", "--from", pgUrl, "--to", `sqlite:${backPath}`);
  assert.equal(toSqlite.code, 0, toSqlite.stderr);
  assert.match(toSqlite.stdout, /^workspace-0: copied 130 events, now at revision 129$/m);
  assert.match(toSqlite.stdout, /copied 650 events in 5 streams \(0 events already present\) in [\d.]+ s/);

  const source = openSqliteEventStore(sourcePath);
  const middle = await openPostgresEventStore(pgUrl);
  const back = openSqliteEventStore(backPath);
  await assertSameEvents(source, middle);
  await assertSameEvents(source, back);
  await Promise.all([source.close(), middle.close(), back.close()]);

  for (const url of [pgUrl, `sqlite:${backPath}`]) {
    const verified = await gatehouse("store", "verify", "--url", url);
    assert.equal(verified.code, 0, verified.stderr);
    assert.match(verified.stdout, /^ok {8}workspace-4: 130 events, hash chain intact$/m);
    assert.match(verified.stdout, /ok: 5 streams, 650 events checked, every hash chain intact\n$/);
  }

  const again = await gatehouse("store", "copy", "--from", `sqlite:${sourcePath}`, "--to", pgUrl);
  assert.equal(again.code, 0, again.stderr);
  assert.match(again.stdout, /^workspace-2: already copied \(130 events\)$/m);
  assert.match(again.stdout, /copied 0 events in 5 streams \(650 events already present\)/);
});

test("a copy killed mid-way and run again completes: no event twice, verify ok", async () => {
  const streams = 40;
  const perStream = 200;
  const total = streams * perStream;
  const sourcePath = await sourceFile(streams, perStream);
  const pgUrl = await freshDatabase();
  assert.equal((await gatehouse("store", "migrate", "--url", pgUrl)).code, 0);

  const child = spawn(
    process.execPath,
    [...CLI, "store", "copy", "--from", `sqlite:${sourcePath}`, "--to", pgUrl, "--page-size", "20"],
    { cwd: ROOT, stdio: ["ignore", "pipe", "pipe"] },
  );
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => {
    stdout += String(d);
  });
  child.stderr.on("data", (d) => {
    stderr += String(d);
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  // Kill it once the first stream is reported done: mid-copy (39 more streams to go).
  await waitUntil(
    "the first copied stream",
    () => stdout.includes("workspace-0: copied") || child.exitCode !== null,
    {
      timeoutMs: 180_000,
      intervalMs: 5,
    },
  );
  child.kill("SIGKILL");
  await exited;
  assert.equal(child.signalCode, "SIGKILL", `killed mid-copy, not finished: ${stdout}${stderr}`);

  const target = await openPostgresEventStore(pgUrl);
  const partial = await target.headPosition();
  assert.ok(partial >= perStream && partial < total, `partly copied: ${partial} of ${total}`);
  assert.equal(
    partial % 20 === 0 || partial % perStream === 0,
    true,
    "whole pages only (appends are atomic)",
  );

  const rerun = await gatehouse("store", "copy", "--from", `sqlite:${sourcePath}`, "--to", pgUrl, "--json");
  assert.equal(rerun.code, 0, rerun.stderr);
  const summary = jsonLines(rerun.stdout).at(-1);
  assert.deepEqual([summary?.eventsAlreadyPresent, summary?.eventsCopied], [partial, total - partial]);
  assert.equal(await target.headPosition(), total, "no event stored twice");
  const ids = new Set((await allEvents(target)).map((e) => `${e.streamId}/${e.metadata.eventId}`));
  assert.equal(ids.size, total);
  const source = openSqliteEventStore(sourcePath);
  await assertSameEvents(source, target);
  await Promise.all([source.close(), target.close()]);

  const verified = await gatehouse("store", "verify", "--url", pgUrl, "--json");
  assert.equal(verified.code, 0, verified.stderr);
  assert.deepEqual(
    (({ ok, streams, eventsChecked }) => [ok, streams, eventsChecked])(JSON.parse(verified.stdout)),
    [true, streams, total],
  );
});

test("a target stream that differs from the source is refused naming the stream and revision; --from = --to is refused", async () => {
  const sourcePath = await sourceFile(2, 5);
  const targetPath = sqlitePath();
  const target = openSqliteEventStore(targetPath);
  await target.append("workspace-1", [{ type: "Local", data: { mine: true } }], "no_stream");
  await target.close();
  const r = await gatehouse(
    "store",
    "copy",
    "--from",
    `sqlite:${sourcePath}`,
    "--to",
    `sqlite:${targetPath}`,
  );
  assert.equal(r.code, 1);
  assert.match(
    r.stderr,
    /^gatehouse: stream workspace-1: the target differs from the source at revision 0 \(.*\); refusing to copy into it\n$/,
  );
  assertNoStack(r);
  const after = openSqliteEventStore(targetPath);
  assert.deepEqual(
    (await after.readStream("workspace-1")).map((e) => e.type),
    ["Local"],
    "the target stream is left as it was",
  );
  await after.close();

  const same = await gatehouse(
    "store",
    "copy",
    "--from",
    `sqlite:${sourcePath}`,
    "--to",
    `sqlite://${sourcePath}`,
  );
  assert.equal(same.code, 1);
  assert.match(same.stderr, /--from and --to name the same store/);
  const missing = await gatehouse(
    "store",
    "copy",
    "--from",
    `sqlite:${join(dir, "nope.sqlite")}`,
    "--to",
    `sqlite:${sqlitePath()}`,
  );
  assert.equal(missing.code, 1);
  assert.match(missing.stderr, /no SQLite event store at .*nope\.sqlite/);
});

test("store verify names the tampered stream and revision with exit code 1; --stream verifies one", async () => {
  const path = await sourceFile(3, 8);
  const raw = new Database(path);
  raw
    .prepare("UPDATE events SET data = ? WHERE stream_id = 'workspace-1' AND revision = 5")
    .run(JSON.stringify({ i: 5, title: "forged" }));
  raw.close();
  const r = await gatehouse("store", "verify", "--url", `sqlite:${path}`);
  assert.equal(r.code, 1, r.stderr);
  assert.match(r.stdout, /^ok {8}workspace-0: 8 events, hash chain intact$/m);
  assert.match(
    r.stdout,
    /^TAMPERED {2}workspace-1 at revision 5: revision 5: metadata\.hash does not match/m,
  );
  assert.match(r.stdout, /TAMPERED: 1 of 3 streams failed: workspace-1 at revision 5\n$/);
  const json = await gatehouse("store", "verify", "--url", `sqlite:${path}`, "--json");
  assert.equal(json.code, 1);
  const parsed = JSON.parse(json.stdout) as {
    ok: boolean;
    failed: Array<{ streamId: string; firstBadRevision: number }>;
  };
  assert.deepEqual(
    [parsed.ok, parsed.failed.map((f) => [f.streamId, f.firstBadRevision])],
    [false, [["workspace-1", 5]]],
  );
  const one = await gatehouse("store", "verify", "--url", `sqlite:${path}`, "--stream", "workspace-2");
  assert.equal(one.code, 0, one.stderr);
  assert.match(one.stdout, /ok: 1 stream, 8 events checked/);
  // The workspace id, as every other command takes it, names its stream too.
  const byWorkspace = await gatehouse("store", "verify", "--url", `sqlite:${path}`, "--stream", "2");
  assert.equal(byWorkspace.code, 0, byWorkspace.stderr);
  assert.match(byWorkspace.stdout, /workspace-2[\s\S]*ok: 1 stream, 8 events checked/);
  const none = await gatehouse("store", "verify", "--url", `sqlite:${path}`, "--stream", "workspace-9");
  assert.equal(none.code, 1);
  assert.match(none.stderr, /stream workspace-9 does not exist/);
});

test("an unreachable server: every store command prints the StoreUnavailable message, password redacted, exit code 1, no stack", async () => {
  const url = "postgres://app:s3cret@127.0.0.1:1/gatehouse";
  const local = `sqlite:${await sourceFile(1, 1)}`;
  for (const args of [
    ["store", "migrate", "--url", url],
    ["store", "verify", "--url", url],
    ["store", "copy", "--from", url, "--to", local],
    ["store", "copy", "--from", local, "--to", url],
  ]) {
    const r = await gatehouse(...args);
    assert.equal(r.code, 1, `${args.join(" ")}: ${r.stdout}${r.stderr}`);
    assert.match(
      r.stderr,
      /^gatehouse: cannot (connect to|reach) the event store at postgres:\/\/app:\*\*\*@127\.0\.0\.1:1\/gatehouse: .*ECONNREFUSED/,
    );
    assert.doesNotMatch(r.stderr, /s3cret/);
    assertNoStack(r);
  }
});
