/**
 * The review notifier over a real event store (SQLite) and a real HTTP receiver for a registered
 * webhook: when a turn ends is read from the stream as the kernel, the agent loop and the approval
 * service write it. A built-in agent turn is one notification when it ends (not one per step), or when
 * a step suspends it; a plain execution is one when it ends; decided writes do not count; a new
 * notifier resumes after the last one recorded and never resends; turned on for the first time, it
 * does not notify history; a turn that cannot be read is skipped without holding up the others.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { WorkspaceStreams } from "@gatehouse/approval-core";
import { type EventStore, type NewEvent, openEventStore, openSqliteEventStore } from "@gatehouse/event-store";
import { startPostgresServer } from "@gatehouse/event-store/postgres-server";
import { loadNotifyConfig, type NotifyConfig } from "@gatehouse/notify";
import {
  ActionDescription,
  ActionRejected,
  ActionSubmitted,
  ChatToolCalled,
  ChatTurnEnded,
  CodeExecuted,
  NotificationPreferencesSet,
  TurnSuspended,
  WorkspaceCreated,
} from "@gatehouse/proto";
import { waitUntil } from "@gatehouse/service-kit";
import pino from "pino";
import type { GatekeeperClients } from "../src/gatekeepers.ts";
import { type RunningKernel, startKernel } from "../src/index.ts";
import { createKernelMetrics } from "../src/metrics.ts";
import { REVIEW_NOTIFICATIONS_STREAM, ReviewNotifier } from "../src/review-notifier.ts";
import { Workspaces } from "../src/workspaces.ts";

const dir = mkdtempSync(join(tmpdir(), "gh-review-notifier-"));
let receiver: Server;
const posts: { pending: number; reviewUrl: string; summaries: string[] }[] = [];
let config: NotifyConfig;
/** A workspace id as the kernel makes them (`w` + 10 hex digits). */
const WS = "w0000000001";
const logger = pino({ level: process.env.LOG_LEVEL ?? "silent" });

before(async () => {
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      posts.push(JSON.parse(body));
      res.end("ok");
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  const port = (receiver.address() as { port: number }).port;
  const registry = join(dir, "webhooks.json");
  writeFileSync(registry, JSON.stringify({ hook: { url: `http://127.0.0.1:${port}/`, format: "json" } }));
  config = loadNotifyConfig({ publicUrl: "https://gh.example.test", webhooksFile: registry });
});
after(() => {
  receiver?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A store with workspace `ws` (owner ana, who asked for the `hook` webhook everywhere). */
async function newStore(name: string, ws = WS): Promise<EventStore> {
  const store = openSqliteEventStore(join(dir, `${name}.sqlite`));
  await seed(store, ws);
  return store;
}

/** Creates workspace `ws` (owner ana) and ana's preferences (the `hook` webhook everywhere). */
async function seed(store: EventStore, ws = WS): Promise<void> {
  await store.append(
    `workspace-${ws}`,
    [
      {
        type: "WorkspaceCreated",
        data: WorkspaceCreated.toJSON({ workspaceId: ws, name: ws, owner: "user:ana" }),
      },
    ],
    "no_stream",
  );
  await store.append(
    "person-ana",
    [
      {
        type: "NotificationPreferencesSet",
        data: NotificationPreferencesSet.toJSON({
          person: "user:ana",
          email: "",
          scopes: [{ workspace: "*", email: false, webhooks: ["hook"] }],
        }),
      },
    ],
    "any",
  );
}

const metrics = createKernelMetrics();

function start(store: EventStore): Promise<ReviewNotifier> {
  return ReviewNotifier.start({
    store,
    streams: new WorkspaceStreams(store),
    workspaces: new Workspaces(store, {} as GatekeeperClients),
    config,
    logger,
    metrics,
  });
}

/** gatehouse_kernel_review_notifications_total{outcome}. */
async function counted(outcome: string): Promise<number> {
  const m = await metrics.reviewNotifications.get();
  return m.values.find((v) => v.labels.outcome === outcome)?.value ?? 0;
}

const submitted = (executionId: string, summary: string): NewEvent => ({
  type: "ActionSubmitted",
  data: ActionSubmitted.toJSON({
    binding: "MEMORY",
    localId: summary,
    description: ActionDescription.fromJSON({ title: `Call ${summary}`, summary }),
    dependsOn: [],
    payloadJson: "{}",
    executionId,
  }),
});
const toolCalled = (turnId: string, executionId: string): NewEvent => ({
  type: "ChatToolCalled",
  data: ChatToolCalled.toJSON({ ...ChatToolCalled.fromJSON({}), chatId: "c1", turnId, executionId }),
});
const executed = (executionId: string): NewEvent => ({
  type: "CodeExecuted",
  data: CodeExecuted.toJSON({ ...CodeExecuted.fromJSON({}), executionId, ok: true }),
});
const turnEnded = (turnId: string): NewEvent => ({
  type: "ChatTurnEnded",
  data: ChatTurnEnded.toJSON({ ...ChatTurnEnded.fromJSON({}), chatId: "c1", turnId, reason: "done" }),
});

async function append(store: EventStore, ...events: NewEvent[]): Promise<void> {
  await store.append(`workspace-${WS}`, events, "any");
}

/** Waits until `n` notifications are recorded; returns them. */
async function recorded(store: EventStore, n: number) {
  const events = await waitUntil(`${n} notifications recorded`, async () => {
    const all = await store.readStream(REVIEW_NOTIFICATIONS_STREAM).catch(() => []);
    return all.length >= n ? all : undefined;
  });
  return events.map((e) => e.data as Record<string, unknown>);
}

test("a built-in agent turn is one notification when it ends, not one per step; a plain execution is one when it ends", async () => {
  const store = await newStore("turns");
  const notifier = await start(store);
  try {
    posts.length = 0;
    const delivered = await counted("delivered");
    await append(store, toolCalled("T", "T.1.1"), submitted("T.1.1", "a"), submitted("T.1.1", "b"));
    await append(store, executed("T.1.1"), toolCalled("T", "T.2.1"), submitted("T.2.1", "c"));
    await append(store, executed("T.2.1"), turnEnded("T"));
    await append(store, submitted("X", "d"), executed("X"));
    const [turn, plain] = await recorded(store, 2);
    assert.equal(turn?.turnId, "T");
    assert.equal(turn?.pending, 3);
    assert.equal(plain?.executionId, "X");
    assert.equal(await counted("delivered"), delivered + 2);
    assert.deepEqual(
      posts.map((p) => [p.reviewUrl, p.pending, p.summaries]),
      [
        ["https://gh.example.test/#/ws/w0000000001/review?turn=T", 3, ["a", "b", "c"]],
        ["https://gh.example.test/#/ws/w0000000001/review?execution=X", 1, ["d"]],
      ],
    );
  } finally {
    await notifier.close();
    await store.close();
  }
});

test("a step that suspends its turn notifies at once; the turn's end does not notify again; decided writes do not count", async () => {
  const store = await newStore("suspend");
  const notifier = await start(store);
  try {
    posts.length = 0;
    await append(
      store,
      toolCalled("U", "U.1.1"),
      submitted("U.1.1", "wait-for-me"),
      submitted("U.1.1", "nope"),
    );
    // The second write (revision 3) is rejected before the step ends: only one still waits.
    await append(store, {
      type: "ActionRejected",
      data: ActionRejected.toJSON({ ...ActionRejected.fromJSON({}), actionId: 3, decidedBy: "user:ana" }),
    });
    await append(store, {
      type: "TurnSuspended",
      data: TurnSuspended.toJSON({ turnId: "U.1.1", actionIds: [2] }),
    });
    await append(store, executed("U.1.1"));
    await recorded(store, 1);
    assert.deepEqual(
      posts.map((p) => [p.reviewUrl, p.pending]),
      [["https://gh.example.test/#/ws/w0000000001/review?turn=U", 1]],
    );
    // The turn ends later (say, the write was rejected): nothing more for U. Y is the sync point.
    await append(store, turnEnded("U"), submitted("Y", "y"), executed("Y"));
    const all = await recorded(store, 2);
    assert.deepEqual(
      all.map((r) => r.turnId || r.executionId),
      ["U", "Y"],
    );
    assert.equal(posts.length, 2);
  } finally {
    await notifier.close();
    await store.close();
  }
});

test("a new notifier resumes after the last recorded notification and never resends; turned on for the first time it skips history", async () => {
  const store = await newStore("restart");
  try {
    // History from before notifications were on: never notified.
    await append(store, submitted("old", "old"), executed("old"));
    posts.length = 0;
    let notifier = await start(store);
    await append(store, submitted("A", "a"), executed("A"));
    await recorded(store, 1);
    await notifier.close();
    // While no notifier runs, B ends: the next notifier catches up and sends it, and A only once.
    await append(store, submitted("B", "b"), executed("B"));
    notifier = await start(store);
    await recorded(store, 2);
    await append(store, submitted("C", "c"), executed("C"));
    const all = await recorded(store, 3);
    await notifier.close();
    assert.deepEqual(
      all.map((r) => r.executionId),
      ["A", "B", "C"],
    );
    assert.deepEqual(
      posts.map((p) => p.reviewUrl.split("=")[1]),
      ["A", "B", "C"],
    );
  } finally {
    await store.close();
  }
});

test("a turn whose workspace cannot be read is skipped and logged; later turns still go out", async () => {
  const store = await newStore("skip");
  const notifier = await start(store);
  try {
    posts.length = 0;
    const skipped = await counted("skipped");
    // A stream that looks like a workspace's but has no WorkspaceCreated.
    await store.append("workspace-broken", [submitted("Z", "z"), executed("Z")], "no_stream");
    await append(store, submitted("OK", "ok"), executed("OK"));
    const all = await recorded(store, 1);
    assert.deepEqual(
      all.map((r) => r.executionId),
      ["OK"],
    );
    assert.equal(posts.length, 1);
    assert.equal(await counted("skipped"), skipped + 1);
  } finally {
    await notifier.close();
    await store.close();
  }
});

test("several kernels on one PostgreSQL store: only the lock holder sends, and another takes over when it stops", async () => {
  const pg = await startPostgresServer({ migrate: true });
  const stores = [await openEventStore(pg.url), await openEventStore(pg.url)];
  const kernels: RunningKernel[] = [];
  try {
    const store = stores[0] as EventStore;
    await seed(store);
    posts.length = 0;
    const leads: number[] = [];
    const kernelOn = (i: number) =>
      startKernel({
        store: stores[i] as EventStore,
        callerTokenSecret: "x".repeat(32),
        gatekeepers: {},
        sandboxRunnerAddress: "127.0.0.1:1",
        logger: pino(
          { level: "info" },
          { write: (line: string) => /review_notifier_started/.test(line) && leads.push(i) },
        ),
        notify: config,
        notifyLeaderUrl: pg.url,
      });
    kernels.push(await kernelOn(0));
    await waitUntil("kernel 0 to lead (its notifier started)", () => leads.includes(0));
    kernels.push(await kernelOn(1));
    await append(store, submitted("A", "a"), executed("A"));
    await recorded(store, 1);
    // Kernel 0 stops: kernel 1 takes the lock and resumes after A.
    await (kernels.shift() as RunningKernel).close();
    await waitUntil("kernel 1 to lead (its notifier started)", () => leads.includes(1));
    await append(store, submitted("B", "b"), executed("B"));
    const all = await recorded(store, 2);
    assert.deepEqual(
      all.map((r) => r.executionId),
      ["A", "B"],
    );
    assert.deepEqual(
      posts.map((p) => p.reviewUrl.split("=")[1]),
      ["A", "B"],
    );
  } finally {
    for (const k of kernels) await k.close();
    for (const s of stores) await s.close();
    await pg.stop();
  }
});
