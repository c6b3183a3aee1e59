/**
 * Refused writes in the stream and the log: WorkspaceStreams.execute records the ActionRefused a
 * latch refusal carries and still throws; the projection shows it as a `refusal` entry (id = its
 * revision) that is never pending. Against the real SQLite event store (in memory).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { type EventStore, openSqliteEventStore } from "@gatehouse/event-store";
import { LogView } from "@gatehouse/proto";
import { WorkspaceStreams } from "../src/adapters/workspace-streams.ts";
import {
  type Command,
  type DomainEvent,
  decide,
  encodeEventData,
  toLogView,
  WorkspaceLatched,
} from "../src/domain/index.ts";
import { binding, created, desc, given, latched, observed, refused, submitted } from "./decider-helpers.ts";

async function seeded(
  events: Parameters<typeof given>[0],
): Promise<{ store: EventStore; streams: WorkspaceStreams }> {
  const store = openSqliteEventStore(":memory:");
  await store.append(
    "workspace-w1",
    events.map((e) => ({
      type: e.type,
      data: encodeEventData(e as DomainEvent),
      metadata: { actor: "test" },
    })),
    "no_stream",
  );
  return { store, streams: new WorkspaceStreams(store) };
}

const push: Command = {
  type: "SubmitAction",
  binding: "MEM",
  localId: "push-1",
  description: desc({ title: "git push main", egress: true }),
  payloadJson: '{"secret":"never stored"}',
  executionId: "x9",
};

test("a latched egress submission appends ActionRefused, then throws the latch error naming the bindings", async () => {
  const { store, streams } = await seeded([
    created,
    binding("MEM"),
    binding("GIT"),
    observed("MEM", true),
    latched(3, "MEM"),
  ]);
  try {
    await assert.rejects(
      streams.execute("w1", (s) => decide(push, s), { caller: { kind: "agent", id: "chat-1" } }),
      (err: Error) =>
        err instanceof WorkspaceLatched && /through "MEM" and is latched.*egress/.test(err.message),
    );
    const events = await store.readStream("workspace-w1");
    assert.equal(events.length, 6);
    const last = events[5]!;
    assert.equal(last.type, "ActionRefused");
    assert.equal(last.metadata.caller?.id, "chat-1");
    assert.doesNotMatch(
      JSON.stringify(last.data),
      /never stored/,
      "the payload of a refused write is not stored",
    );
    const state = await streams.state("w1");
    assert.equal(state.actions.size, 0, "a refusal is not an action");
    const r = state.refusals.get(5);
    assert.equal(r?.binding, "MEM");
    assert.equal(r?.localId, "push-1");
    assert.match(r?.reason ?? "", /start a new workspace/);
  } finally {
    await store.close();
  }
});

test("refusals appear in the log by id between observations and actions, with no status", () => {
  const state = given([
    created,
    binding("MEM"),
    binding("GIT"),
    observed("MEM", true),
    latched(3, "MEM"),
    refused("GIT", "g1", "latched: start a new workspace"),
    submitted("MEM", "m1"),
  ]);
  const view = toLogView(state);
  assert.deepEqual(
    view.entries.map((e) => [e.id, e.entry?.$case]),
    [
      [3, "observation"],
      [5, "refusal"],
      [6, "action"],
    ],
  );
  const entry = view.entries[1]?.entry;
  assert.ok(entry?.$case === "refusal");
  assert.equal(entry.refusal.id, 5);
  assert.equal(entry.refusal.reason, "latched: start a new workspace");
  assert.equal(entry.refusal.refusedAt, "2026-01-01T00:00:05Z");
  assert.deepEqual(entry.refusal.caller, { kind: "agent", id: "chat1" });
  // The proto round trip keeps the entry (the gRPC view and `--json` show it).
  const decoded = LogView.decode(LogView.encode(view).finish());
  assert.deepEqual(decoded.entries[1], view.entries[1]);
});
