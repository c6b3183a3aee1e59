/**
 * Apply outcomes when the connection to PostgreSQL fails (issue: an outcome is "failed" only when
 * nothing happened). A real PostgreSQL; writes are staged on a gatekeeper connected directly, then
 * applied through the gRPC apply path (ApplyAction / ApplyActions) of a second gatekeeper whose
 * registry points at a TCP proxy (pg-proxy.ts) that breaks the connection at an exact point, or at
 * a closed port. Each test checks the server's own record (the row and the marker row), so a
 * write that happened is never recorded "failed":
 *
 * - COMMIT answered by the server, the answer cut, the database then unreachable → outcome unknown
 *   (UNAVAILABLE, which the lifecycle worker records as unknown), the row is there;
 * - the same with the database reachable again → applied (the marker row was found);
 * - COMMIT's answer never comes, short apply deadline → outcome unknown, the row is there;
 * - the write's statement never answered, short apply deadline → failed (nothing committed);
 * - the marker table check before the write never answered → failed, not sent;
 * - nothing listening → failed, not sent, naming postgres://127.0.0.1:port and "refused";
 * - the login refused (no such database, a wrong password) → failed, not sent, without the
 *   server's text (it names the role or the database);
 * - the server killed while the statement runs (blocked on a lock) → failed within seconds.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { APPLY_MAX_MS_METADATA } from "@gatehouse/gatekeeper-kit";
import type { ApplyActionResponse, ApplyActionsProgress } from "@gatehouse/proto";
import { freePort, waitUntil } from "@gatehouse/service-kit";
import { Metadata, type ServiceError, status } from "@grpc/grpc-js";
import { APPLICATION_NAME } from "../src/pools.ts";
import { applyVia, type Db, ENV, FakeApprovalQueue, type Harness, startDb, startHarness } from "./helpers.ts";
import { PgProxy } from "./pg-proxy.ts";

const URL = "postgres://shop/shop#schema=sales";
/** Status codes by which the worker records an apply as failed (refused before acting); any other is unknown. */
const REFUSALS = [
  status.UNIMPLEMENTED,
  status.INVALID_ARGUMENT,
  status.UNAUTHENTICATED,
  status.PERMISSION_DENIED,
  status.NOT_FOUND,
];

let db: Db;
let approval: FakeApprovalQueue;
/** The gatekeeper writes are staged on (connected to the database directly). */
let stager: Harness;
const cleanups: (() => Promise<void>)[] = [];

before(async () => {
  db = await startDb({ requirePasswords: true });
  approval = await new FakeApprovalQueue({ binding: "DB" }).start();
  stager = await startHarness(db, { approval });
});
after(async () => {
  for (const c of cleanups.reverse()) await c();
  await stager?.close();
  approval?.close();
  await db?.stop();
});

type Sub = { localId: string; actionId: number; payloadJson: string };

/** Stages an INSERT of `note` into sales.audit; returns its submission. */
async function stageInsert(note: string): Promise<Sub> {
  const s = stager.open(URL);
  try {
    const w = await s.db.execute({ sql: `INSERT INTO audit (note) VALUES ('${note}')` });
    assert.equal(w.rowCount, 1);
    const sub = approval.submissions.find((x) => x.localId === w.id);
    assert.ok(sub, "the write was submitted for approval");
    return sub;
  } finally {
    s.close();
  }
}

/** A proxy to the database and a gatekeeper whose registry points at it (both closed after the tests). */
async function viaProxy(): Promise<{ proxy: PgProxy; h: Harness }> {
  const proxy = await PgProxy.start(db.port);
  const h = await startHarness(db, { approval, serverPort: proxy.port });
  cleanups.push(async () => {
    await proxy.close(); // first: a connection the proxy holds ends, so the gatekeeper's pools can end
    await h.close();
  });
  return { proxy, h };
}

/** Rows of sales.audit with `note`, and marker rows of `actionId`, as the server has them. */
async function onServer(note: string, actionId: number): Promise<{ rows: number; markers: number }> {
  const [r] = await db.admin<{ rows: number; marker_table: string | null }>(
    `SELECT (SELECT count(*)::int FROM sales.audit WHERE note = $1) AS rows,
            pg_catalog.to_regclass('gatehouse.applied_actions')::text AS marker_table`,
    [note],
  );
  if (!r?.marker_table) return { rows: r?.rows ?? 0, markers: 0 };
  const [m] = await db.admin<{ n: number }>(
    "SELECT count(*)::int AS n FROM gatehouse.applied_actions WHERE workspace_id = 'ws-1' AND action_id = $1",
    [actionId],
  );
  return { rows: r.rows, markers: m?.n ?? 0 };
}

/** ApplyAction; resolves with the outcome or the gRPC error the stream ended with. */
async function apply(h: Harness, sub: Sub): Promise<ApplyActionResponse | ServiceError> {
  return applyVia(h.client, URL, sub).catch((e: ServiceError) => e);
}

/** ApplyActions of one action with a per-action maximum of `maxMs`; its outcome or the stream's error. */
function applyWithin(h: Harness, sub: Sub, maxMs: number): Promise<ApplyActionResponse | ServiceError> {
  const md = new Metadata();
  md.set(APPLY_MAX_MS_METADATA, String(maxMs));
  const call = h.client.applyActions(
    {
      workspaceId: "ws-1",
      binding: "DB",
      url: URL,
      trust: "byo",
      actions: [
        { actionId: sub.actionId, localId: sub.localId, payloadJson: sub.payloadJson, dependencyResults: {} },
      ],
    },
    md,
  );
  return new Promise((resolve) => {
    let outcome: ApplyActionResponse | undefined;
    call.on("data", (m: ApplyActionsProgress) => {
      if (m.event?.$case === "outcome") outcome = m.event.outcome;
    });
    call.on("error", (e: ServiceError) => resolve(e));
    call.on("end", () =>
      resolve(outcome ?? (new Error("ApplyActions ended without an outcome") as ServiceError)),
    );
  });
}

/** Asserts `r` is "outcome unknown": the stream ended with a status the worker does not take as a refusal. */
function assertUnknown(r: ApplyActionResponse | ServiceError): ServiceError {
  assert.ok(r instanceof Error, `expected the apply to end without an outcome, got ${JSON.stringify(r)}`);
  assert.equal(r.code, status.UNAVAILABLE, r.message);
  assert.ok(!REFUSALS.includes(r.code));
  return r;
}

/** Asserts `r` is the outcome "failed" and returns its error. */
function assertFailed(r: ApplyActionResponse | ServiceError): string {
  assert.ok(!(r instanceof Error), `expected an outcome, got the error ${(r as Error).message}`);
  assert.equal(r.ok, false, "the outcome is failed");
  return r.error;
}

test("COMMIT answered by the server, its answer cut and the database then unreachable: outcome unknown, and the row is in the database", async () => {
  const { proxy, h } = await viaProxy();
  const sub = await stageInsert("cut-after-commit");
  proxy.fault = { kind: "cut-after-commit", refuse: true };
  const err = assertUnknown(await apply(h, sub));
  assert.deepEqual(proxy.events, ["commit-forwarded", "commit-answered", "cut", "refusing"]);
  assert.match(
    err.details,
    new RegExp(
      `^applying action ${sub.actionId} at postgres://127\\.0\\.0\\.1:${proxy.port}: the connection closed before the answer came`,
    ),
  );
  assert.match(err.details, /outcome is unknown/);
  assert.doesNotMatch(err.details, /gatehouse_write|write-pw/, "no role or password in the message");
  assert.deepEqual(
    await onServer("cut-after-commit", sub.actionId),
    { rows: 1, markers: 1 },
    "the write committed",
  );
});

test("COMMIT answered by the server and its answer cut, the database reachable again: applied (the marker row shows it)", async () => {
  const { proxy, h } = await viaProxy();
  const sub = await stageInsert("cut-then-reconciled");
  proxy.fault = { kind: "cut-after-commit" };
  const r = await apply(h, sub);
  assert.ok(!(r instanceof Error), (r as Error).message);
  assert.equal(r.ok, true, r.error);
  assert.equal((JSON.parse(r.resultJson) as { rowCount: number }).rowCount, 1);
  assert.deepEqual(proxy.events, ["commit-forwarded", "commit-answered", "cut"]);
  assert.deepEqual(await onServer("cut-then-reconciled", sub.actionId), { rows: 1, markers: 1 });
});

test("COMMIT forwarded and no answer before the apply's deadline: outcome unknown at the deadline, and the row is in the database", async () => {
  const { proxy, h } = await viaProxy();
  const sub = await stageInsert("commit-stalled");
  proxy.fault = { kind: "stall-after-commit" };
  const started = Date.now();
  const err = assertUnknown(await applyWithin(h, sub, 2000));
  const took = Date.now() - started;
  // The gatekeeper ends it itself (the call has no deadline): at its maximum less a margin, not later.
  assert.ok(took >= 1700 && took < 10_000, `the apply ended at its 2 s maximum (took ${took} ms)`);
  assert.deepEqual(proxy.events, ["commit-forwarded"]);
  assert.match(
    err.details,
    /at postgres:\/\/127\.0\.0\.1:\d+: no answer came in time; the request may have reached the system, so the outcome is unknown/,
  );
  assert.deepEqual(
    await onServer("commit-stalled", sub.actionId),
    { rows: 1, markers: 1 },
    "the server committed",
  );
});

test("the write's statement never answered before the apply's deadline: failed, and nothing was committed", async () => {
  const { proxy, h } = await viaProxy();
  const sub = await stageInsert("statement-stalled");
  proxy.fault = { kind: "stall-on", match: /statement-stalled/ };
  const started = Date.now();
  const error = assertFailed(await applyWithin(h, sub, 2000));
  const took = Date.now() - started;
  assert.ok(took >= 1700 && took < 10_000, `the apply ended at its 2 s maximum (took ${took} ms)`);
  assert.deepEqual(proxy.events, ["stalled"]);
  assert.match(
    error,
    /applying action \d+ at postgres:\/\/127\.0\.0\.1:\d+ failed: no answer came before the apply's deadline/,
  );
  assert.match(error, /before COMMIT was sent/);
  assert.match(error, /nothing was changed/);
  await proxy.close(); // the held connection ends: the server rolls its open transaction back
  await waitUntil("the held transaction to end", async () => {
    const [a] = await db.admin<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND state <> 'idle'",
      [APPLICATION_NAME],
    );
    return a?.n === 0 || undefined;
  });
  assert.deepEqual(await onServer("statement-stalled", sub.actionId), { rows: 0, markers: 0 });
});

test("the marker table check before the write never answered: failed at the deadline, not sent", async () => {
  const { proxy, h } = await viaProxy();
  const sub = await stageInsert("marker-check-stalled");
  proxy.fault = { kind: "stall-on", match: /to_regclass/ };
  const error = assertFailed(await applyWithin(h, sub, 1500));
  assert.deepEqual(proxy.events, ["stalled"]);
  assert.match(
    error,
    new RegExp(
      `^applying action ${sub.actionId} at postgres://127\\.0\\.0\\.1:${proxy.port} was not sent: the connection could not be opened in time`,
    ),
  );
  assert.deepEqual(await onServer("marker-check-stalled", sub.actionId), { rows: 0, markers: 0 });
});

test("nothing listening at the server's port: failed, not sent, naming postgres://127.0.0.1:port and the refusal", async () => {
  const port = await freePort();
  const h = await startHarness(db, { approval, serverPort: port });
  cleanups.push(() => h.close());
  const sub = await stageInsert("server-down");
  const error = assertFailed(await apply(h, sub));
  assert.match(
    error,
    new RegExp(
      `^applying action ${sub.actionId} at postgres://127\\.0\\.0\\.1:${port} was not sent: connection refused`,
    ),
  );
  assert.match(error, /check that the server is running/);
  assert.doesNotMatch(
    error,
    /gatehouse_write|write-pw|\/shop/,
    "no role, password or database in the message",
  );
  assert.deepEqual(await onServer("server-down", sub.actionId), { rows: 0, markers: 0 });
});

test("a database the server does not have: failed, not sent, the server's refusal of the login named without the database", async () => {
  const h = await startHarness(db, { approval, registry: { databases: ["shop", "gone"] } });
  cleanups.push(() => h.close());
  const sub = await stageInsert("database-gone");
  const r = await applyVia(h.client, "postgres://shop/gone#schema=sales", sub);
  const error = assertFailed(r);
  assert.match(
    error,
    new RegExp(
      `^applying action ${sub.actionId} at postgres://127\\.0\\.0\\.1:${db.port} was not sent: the server refused the login: the database does not exist \\[3D000\\]`,
    ),
  );
  assert.doesNotMatch(
    error,
    /"gone"|gatehouse_write/,
    "the server's own message (naming the database) is not shown",
  );
  assert.deepEqual(await onServer("database-gone", sub.actionId), { rows: 0, markers: 0 });
});

test("a write role whose password the server refuses: failed, not sent, naming the refusal without the role", async () => {
  const h = await startHarness(db, { approval, env: { ...ENV, SHOP_WRITE_PW: "wrong-pw" } });
  cleanups.push(() => h.close());
  const sub = await stageInsert("password-refused");
  const error = assertFailed(await apply(h, sub));
  assert.match(
    error,
    new RegExp(
      `^applying action ${sub.actionId} at postgres://127\\.0\\.0\\.1:${db.port} was not sent: the server refused the login: password authentication failed \\[28P01\\]; check the write role and its password`,
    ),
  );
  assert.doesNotMatch(error, /gatehouse_write|wrong-pw/, "neither the role nor the password is shown");
  assert.deepEqual(await onServer("password-refused", sub.actionId), { rows: 0, markers: 0 });
});

test("the server killed while the write's statement runs (blocked on a lock): the apply ends within seconds as failed, and the server rolls it back", async () => {
  const { proxy, h } = await viaProxy();
  const sub = await stageInsert("killed-mid-statement");
  const locker = await db.client();
  try {
    await locker.query("BEGIN");
    await locker.query("LOCK TABLE sales.audit IN SHARE MODE");
    const waitingOnLock = async () => {
      await waitUntil("the write to wait on the lock", async () => {
        const [a] = await db.admin<{ n: number }>(
          "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND wait_event_type = 'Lock'",
          [APPLICATION_NAME],
        );
        return (a?.n ?? 0) > 0 || undefined;
      });
    };
    proxy.fault = { kind: "kill-on", match: /killed-mid-statement/, when: waitingOnLock };
    const pending = apply(h, sub);
    await waitUntil("the proxy to kill the connection", () => proxy.events.includes("killed") || undefined);
    const killedAt = Date.now();
    const r = await pending;
    const took = Date.now() - killedAt;
    assert.ok(took < 5000, `the apply ended ${took} ms after the kill (well under 30 s)`);
    const error = assertFailed(r);
    assert.match(
      error,
      /at postgres:\/\/127\.0\.0\.1:\d+ failed: the connection broke before COMMIT was sent/,
    );
  } finally {
    await locker.query("COMMIT");
    await locker.end();
  }
  await waitUntil("the killed backend to end", async () => {
    const [a] = await db.admin<{ n: number }>(
      "SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1 AND state <> 'idle'",
      [APPLICATION_NAME],
    );
    return a?.n === 0 || undefined;
  });
  assert.deepEqual(await onServer("killed-mid-statement", sub.actionId), { rows: 0, markers: 0 });
});
