import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { openSqliteEventStore } from "@gatehouse/event-store";
import type { ChatDelta, LogNotice } from "@gatehouse/gateway-contract";
import {
  chatDeltaSubject,
  connectNatsNoticeBus,
  InProcessNoticeBus,
  InvalidSubjectToken,
  logSubject,
  NatsUnreachable,
  type NoticeListener,
  publishLogNotices,
} from "../src/index.ts";
import { startNatsServer } from "../src/nats-server.ts";

function collector() {
  const notices: LogNotice[] = [];
  const resyncs: string[] = [];
  const waiters: Array<() => void> = [];
  const listener: NoticeListener = {
    notice: (n) => {
      notices.push(n);
      for (const w of waiters.splice(0)) w();
    },
    resync: (r) => {
      resyncs.push(r);
      for (const w of waiters.splice(0)) w();
    },
  };
  const until = async (pred: () => boolean, ms = 60_000) => {
    const deadline = Date.now() + ms;
    while (!pred()) {
      if (Date.now() > deadline) throw new Error("timed out waiting");
      await new Promise<void>((r) => {
        waiters.push(r);
        setTimeout(r, 50);
      });
    }
  };
  /** Notices other than the probes {@link heard} sends. */
  const real = () => notices.filter((n) => n.workspaceId !== PROBE);
  /**
   * Publishes a probe notice every 100 ms (through `publish`) until this collector receives one: then the
   * subscription has reached the server, so what is published next is delivered (no fixed wait that a
   * busy machine can outrun).
   */
  const heard = async (publish: (n: LogNotice) => void) => {
    const before = notices.length - real().length;
    const probe = { workspaceId: PROBE, revision: 0, type: "Probe" };
    publish(probe);
    const timer = setInterval(() => publish(probe), 100);
    try {
      await until(() => notices.length - real().length > before);
    } finally {
      clearInterval(timer);
    }
  };
  return { notices, resyncs, listener, until, real, heard };
}

const PROBE = "probe";

test("a workspace id that is not one subject token is refused by name", () => {
  assert.equal(logSubject("ws_1"), "gatehouse.ws.ws_1.log");
  for (const bad of ["", "a.b", "a*", "a>", "a b"]) assert.throws(() => logSubject(bad), InvalidSubjectToken);
});

test("the publisher sends one notice per new workspace event, in order, and none for older events or other streams", async () => {
  const dir = mkdtempSync(join(tmpdir(), "notices-"));
  const store = openSqliteEventStore(join(dir, "events.sqlite"));
  try {
    await store.append("workspace-old", [{ type: "WorkspaceCreated", data: {} }], "no_stream");
    const bus = new InProcessNoticeBus();
    const c = collector();
    bus.subscribe(c.listener);
    const sub = await publishLogNotices(store, bus);
    await store.append("workspace-w1", [{ type: "WorkspaceCreated", data: {} }], "no_stream");
    await store.append("other-stream", [{ type: "X", data: {} }], "no_stream");
    await store.append("workspace-w1", [{ type: "ActionSubmitted", data: {} }], 0);
    await c.until(() => c.notices.length >= 2);
    // "None for other streams": no event to wait on for an absence; a short grace lets a wrong extra
    // notice arrive (it would be published right after the two above) before the exact comparison.
    await new Promise((r) => setTimeout(r, 100));
    const before = Date.now();
    // Each notice carries when it was published (the gateway's notice → browser latency starts there).
    for (const n of c.notices) {
      assert.ok(typeof n.publishedAtMs === "number" && n.publishedAtMs <= before, JSON.stringify(n));
    }
    assert.deepEqual(
      c.notices.map(({ publishedAtMs: _, ...n }) => n),
      [
        { workspaceId: "w1", revision: 0, type: "WorkspaceCreated" },
        { workspaceId: "w1", revision: 1, type: "ActionSubmitted" },
      ],
    );
    await sub.close();
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test("notices cross a real nats-server; after the server is killed and restarted the subscriber is told to resync", async () => {
  const server = await startNatsServer();
  const publisher = await connectNatsNoticeBus({
    servers: server.url,
    name: "test-pub",
    reconnectTimeWaitMs: 100,
  });
  const subscriber = await connectNatsNoticeBus({
    servers: server.url,
    name: "test-sub",
    reconnectTimeWaitMs: 100,
  });
  try {
    const c = collector();
    subscriber.subscribe(c.listener);
    await c.heard((n) => publisher.publish(n));
    // publishedAtMs crosses the wire (the gateway's notice → browser latency needs it).
    const notice = {
      workspaceId: "w1",
      revision: 3,
      type: "ActionSubmitted",
      publishedAtMs: 1_700_000_000_000,
    };
    publisher.publish(notice);
    await c.until(() => c.real().length === 1);
    assert.deepEqual(c.real()[0], notice);

    await server.kill();
    await server.restart();
    await c.until(() => c.resyncs.length >= 1);
    assert.match(c.resyncs[0] ?? "", /missed/);
    // After the reconnect, notices flow again.
    await c.heard((n) => publisher.publish(n));
    publisher.publish({ workspaceId: "w1", revision: 4, type: "ActionApproved" });
    await c.until(() => c.real().some((n) => n.revision === 4));
  } finally {
    await publisher.close();
    await subscriber.close();
    await server.close();
  }
});

test("a malformed message on a notice subject is dropped, not delivered", async () => {
  const server = await startNatsServer();
  const statuses: string[] = [];
  const subscriber = await connectNatsNoticeBus({
    servers: server.url,
    name: "test-sub",
    onStatus: (s) => statuses.push(s.type),
  });
  const raw = await import("nats").then((m) => m.connect({ servers: server.url }));
  try {
    const c = collector();
    subscriber.subscribe(c.listener);
    await c.heard((n) => raw.publish(logSubject(n.workspaceId), JSON.stringify(n)));
    raw.publish("gatehouse.ws.w1.log", "not json");
    raw.publish("gatehouse.ws.w1.log", JSON.stringify({ workspaceId: "w1", revision: -1, type: "" }));
    raw.publish("gatehouse.ws.w1.log", JSON.stringify({ workspaceId: "w1", revision: 1, type: "T" }));
    await c.until(() => c.real().length === 1);
    assert.deepEqual(c.real(), [{ workspaceId: "w1", revision: 1, type: "T" }]);
    assert.equal(statuses.filter((s) => s === "malformed_notice").length, 2);
  } finally {
    await raw.close();
    await subscriber.close();
    await server.close();
  }
});

test("an unreachable NATS server fails start-up with a clear error", async () => {
  await assert.rejects(
    connectNatsNoticeBus({ servers: "nats://127.0.0.1:1", name: "x" }),
    (err: Error) =>
      err instanceof NatsUnreachable && /cannot connect to NATS at nats:\/\/127\.0\.0\.1:1/.test(err.message),
  );
});

test("chat deltas cross a real nats-server in order to every listener; malformed ones are dropped; the in-process bus delivers them too", async () => {
  const delta = (seq: number, text: string) => ({
    workspaceId: "w1",
    chatId: "c1",
    turnId: "t1",
    step: 1,
    seq,
    text,
  });
  const inProcess = new InProcessNoticeBus();
  const local: ChatDelta[] = [];
  inProcess.subscribe({ notice: () => {}, resync: () => {}, chatDelta: (d) => local.push(d) });
  // A listener without chatDelta is skipped, not broken.
  inProcess.subscribe({ notice: () => {}, resync: () => {} });
  inProcess.publishChatDelta(delta(0, "Hel"));
  inProcess.publishChatDelta(delta(1, "lo"));
  assert.deepEqual(
    local.map((d) => d.text),
    ["Hel", "lo"],
  );
  assert.throws(
    () => inProcess.publishChatDelta({ ...delta(2, "x"), workspaceId: "a.b" }),
    InvalidSubjectToken,
  );

  const server = await startNatsServer();
  const statuses: string[] = [];
  const publisher = await connectNatsNoticeBus({ servers: server.url, name: "test-pub" });
  const subscriber = await connectNatsNoticeBus({
    servers: server.url,
    name: "test-sub",
    onStatus: (s) => statuses.push(s.type),
  });
  const raw = await import("nats").then((m) => m.connect({ servers: server.url }));
  try {
    const c = collector();
    const deltas: ChatDelta[] = [];
    subscriber.subscribe({ ...c.listener, chatDelta: (d) => deltas.push(d) });
    // The delta subscription is sent right after the notice one on the same connection: once a
    // probe notice is heard, both have reached the server.
    await c.heard((n) => publisher.publish(n));
    raw.publish(chatDeltaSubject("w1"), "not json");
    raw.publish(chatDeltaSubject("w1"), JSON.stringify({ ...delta(0, "x"), seq: -1 }));
    const sent = Array.from({ length: 20 }, (_, i) => delta(i, `part ${i} `));
    for (const d of sent) publisher.publishChatDelta(d);
    await c.until(() => deltas.length === sent.length);
    assert.deepEqual(deltas, sent);
    assert.equal(statuses.filter((s) => s === "malformed_chat_delta").length, 2);
    // Deltas are not notices: nothing reached the notice listener.
    assert.equal(c.real().length, 0);
  } finally {
    await raw.close();
    await publisher.close();
    await subscriber.close();
    await server.close();
  }
});
