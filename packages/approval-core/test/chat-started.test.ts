/**
 * ChatStarted in the projection: each observation, action and refused write whose caller is
 * {agent, chatId} carries who started that chat (`chatStartedBy`); other callers and chats without
 * a ChatStarted carry ""; a later ChatStarted with the same chat id changes nothing.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { type FoldableEvent, foldEvents, toLogView } from "../src/domain/index.ts";
import { binding, created, observed, refused, stored, submitted } from "./decider-helpers.ts";

type Ev = Parameters<typeof stored>[0];

const chatStarted = (chatId: string, startedBy: string): Ev => ({
  type: "ChatStarted",
  data: { chatId, startedBy, surface: "mcp-http", model: "" },
});

/** The events as stream revisions 0..n-1, each with its caller ([kind, id]). */
function fold(events: Array<[Ev, [string, string]]>) {
  const folded: FoldableEvent[] = events.map(([e, [kind, id]], revision) => {
    const s = stored(e, revision);
    return { ...s, metadata: { ...s.metadata, caller: { kind, id } } };
  });
  return toLogView(foldEvents(folded));
}

test("entries of an agent chat carry who started it; other callers and unstarted chats carry nothing", () => {
  const view = fold([
    [created, ["user", "ann"]],
    [binding("MEMORY"), ["user", "ann"]],
    [chatStarted("chat1", "user:ann"), ["agent", "chat1"]],
    [observed("MEMORY"), ["agent", "chat1"]],
    [submitted("MEMORY", "~1"), ["agent", "chat1"]],
    [refused("MEMORY", "~2", "latched"), ["agent", "chat1"]],
    [chatStarted("chat1", "user:mallory"), ["agent", "chat1"]],
    [submitted("MEMORY", "~3"), ["agent", "chat2"]],
    [submitted("MEMORY", "~4"), ["user", "chat1"]],
  ]);
  const owners = view.entries.map((e) => {
    const x = e.entry;
    if (x?.$case === "observation") return [e.id, x.observation.chatStartedBy];
    if (x?.$case === "action") return [e.id, x.action.chatStartedBy];
    return [e.id, x?.$case === "refusal" ? x.refusal.chatStartedBy : "?"];
  });
  assert.deepEqual(owners, [
    [3, "user:ann"],
    [4, "user:ann"],
    [5, "user:ann"],
    [7, ""],
    [8, ""],
  ]);
  assert.equal(view.revision, 8, "ChatStarted advances the revision like any event");
});
