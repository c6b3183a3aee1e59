import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { type ChatCommand, encodeChatEventData, foldChats } from "@gatehouse/agent-core";
import { type EventStore, openSqliteEventStore, type ReadOptions } from "@gatehouse/event-store";
import { appendChat, readChats } from "../src/agent/chat-appends.ts";
import { ChatsCache, configureChatsCache } from "../src/agent/chats-cache.ts";

const PERSON = "user:ada";

/** A store whose readStream calls are recorded (stream, fromRevision, events returned). */
function counting(store: EventStore): { store: EventStore; reads: { from: number; got: number }[] } {
  const reads: { from: number; got: number }[] = [];
  const wrapped = Object.create(store) as EventStore;
  wrapped.readStream = async (streamId: string, options?: ReadOptions) => {
    const events = await store.readStream(streamId, options);
    reads.push({ from: options?.fromRevision ?? 0, got: events.length });
    return events;
  };
  return { store: wrapped, reads };
}

async function withStore(fn: (store: EventStore) => Promise<void>): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), "gh-chats-cache-"));
  const store = openSqliteEventStore(join(dir, "events.sqlite"));
  try {
    await fn(store);
  } finally {
    await store.close();
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Creates `workspace-<ws>` with `filler` events that are not chat events. */
async function seed(store: EventStore, ws: string, filler = 3): Promise<void> {
  await store.append(
    `workspace-${ws}`,
    Array.from({ length: filler }, (_, n) => ({ type: "BenchFiller", data: { n } })),
    "no_stream",
  );
}

function start(chatId: string): ChatCommand {
  return { type: "StartChat", chatId, startedBy: PERSON, model: "fake/m" };
}

function send(chatId: string, turnId: string, text: string): ChatCommand {
  return {
    type: "SendMessage",
    chatId,
    turnId,
    text,
    sentBy: PERSON,
    model: "fake/m",
    maxSteps: 5,
    maxTokens: 1000,
  };
}

/** Appends chat commands straight to the store, as another process would (no cache of ours sees it). */
async function appendElsewhere(store: EventStore, ws: string, events: { type: string; data: unknown }[]) {
  await store.append(`workspace-${ws}`, events, "any");
}

test("a read after an append by another process catches up, reading only the new events", () =>
  withStore(async (raw) => {
    await seed(raw, "w1", 50);
    const { store, reads } = counting(raw);
    const cache = configureChatsCache(store, {});
    await appendChat(store, "w1", "c1", [start("c1")]);
    const first = await readChats(store, "w1");
    assert.equal(first.chats.chats.get("c1")?.startedBy, PERSON);
    // Another process appends a message the cache has not seen.
    const chatStarted = (await raw.readStream("workspace-w1")).at(-1);
    assert.equal(chatStarted?.type, "ChatStarted");
    const other = foldChats(await raw.readStream("workspace-w1"));
    const { decideChat } = await import("@gatehouse/agent-core");
    const planned = decideChat(send("c1", "t1", "from elsewhere"), other);
    await appendElsewhere(
      raw,
      "w1",
      planned.map((e) => ({ type: e.type, data: encodeChatEventData(e) })),
    );
    reads.length = 0;
    const after = await readChats(store, "w1");
    const chat = after.chats.chats.get("c1");
    assert.equal(chat?.entries.at(-1)?.kind, "user");
    assert.equal(chat?.turns.at(-1)?.turnId, "t1");
    assert.equal(after.chats.revision, await raw.streamRevision("workspace-w1"));
    assert.deepEqual(
      reads,
      [{ from: 51, got: planned.length }],
      "only the events after the cached revision are read",
    );
    // The same as folding the whole stream.
    assert.deepEqual(after.chats, foldChats(await raw.readStream("workspace-w1")));
    // The decider sees the turn the other process started: a second message is refused while it runs.
    await assert.rejects(appendChat(store, "w1", "c1", [send("c1", "t2", "again")]), /turn|open|running/i);
    assert.equal(cache.stats().workspaces, 1);
  }));

test("a snapshot handed out is never changed by later reads or appends", () =>
  withStore(async (store) => {
    await seed(store, "w1");
    configureChatsCache(store, {});
    await appendChat(store, "w1", "c1", [start("c1")]);
    const held = await readChats(store, "w1");
    const frozen = structuredClone(held.chats);
    // Several commands in one append: the later ones are decided on a copy, not on the snapshot.
    await appendChat(store, "w1", "c2", [start("c2"), send("c2", "t1", "hello")], {
      actor: PERSON,
      caller: { kind: "user", id: "ada" },
    });
    await appendChat(store, "w1", "c1", [send("c1", "t9", "hi")]);
    const now = await readChats(store, "w1");
    assert.deepEqual(held.chats, frozen, "the earlier snapshot is as it was");
    assert.notEqual(now.chats, held.chats);
    assert.equal(now.chats.chats.get("c2")?.entries.length, 1);
    assert.equal(now.chats.chats.get("c1")?.turns.length, 1);
  }));

test("concurrent reads and appends of one workspace all see the stream's head", () =>
  withStore(async (store) => {
    await seed(store, "w1");
    configureChatsCache(store, {});
    await Promise.all(
      Array.from({ length: 8 }, (_, n) => appendChat(store, "w1", `c${n}`, [start(`c${n}`)])),
    );
    const [a, b] = await Promise.all([readChats(store, "w1"), readChats(store, "w1")]);
    const whole = foldChats(await store.readStream("workspace-w1"));
    assert.equal(whole.chats.size, 8);
    assert.deepEqual(a.chats, whole);
    assert.deepEqual(b.chats, whole);
  }));

test("workspaces beyond maxWorkspaces are evicted least recently read first; a fold above maxBytes is not kept", () =>
  withStore(async (raw) => {
    for (const ws of ["a", "b", "c"]) await seed(raw, ws);
    const { store, reads } = counting(raw);
    const cache = new ChatsCache(store, { maxWorkspaces: 2 });
    await cache.read("a");
    await cache.read("b");
    await cache.read("a"); // a is now the most recently read
    await cache.read("c"); // evicts b
    assert.equal(cache.stats().workspaces, 2);
    reads.length = 0;
    await cache.read("a");
    await cache.read("b");
    assert.deepEqual(reads, [
      { from: 3, got: 0 }, // a kept: only the tail is read
      { from: 0, got: 3 }, // b evicted: folded whole
    ]);

    const tiny = new ChatsCache(store, { maxBytes: 10 });
    await tiny.read("a");
    assert.deepEqual(tiny.stats(), { workspaces: 0, bytes: 0 });

    const off = new ChatsCache(store, { maxWorkspaces: 0 });
    reads.length = 0;
    await off.read("a");
    await off.read("a");
    assert.deepEqual(reads, [
      { from: 0, got: 3 },
      { from: 0, got: 3 },
    ]);
    assert.throws(() => new ChatsCache(store, { maxBytes: -1 }), /maxBytes/);
  }));
