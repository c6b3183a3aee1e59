/**
 * The chat page's streamed model text (src/chatStream.ts): deltas append in seq order per step, a
 * retried call (seq 0 again) starts afresh, a missed delta freezes the text, other chats' and
 * recorded steps' deltas change nothing, and the recorded answer replaces what streamed.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Chat, ChatDelta } from "@gatehouse/gateway-contract";
import { applyDelta, dropRecorded, type Streaming, streamingOf } from "../src/chatStream.ts";

const chat = (entries: Chat["entries"] = []): Chat => ({
  workspaceId: "w1",
  chatId: "c1",
  startedBy: "user:a",
  model: "fake:m",
  startedAt: "",
  revision: 5,
  turns: [],
  entries,
});
const d = (seq: number, text: string, step = 1, chatId = "c1"): ChatDelta => ({
  workspaceId: "w1",
  chatId,
  turnId: "t1",
  step,
  seq,
  text,
});
const fold = (c: Chat, ...deltas: ChatDelta[]) =>
  deltas.reduce<Streaming>((s, x) => applyDelta(s, c, x), new Map());

test("deltas of a step append in seq order; each step streams on its own", () => {
  const s = fold(chat(), d(0, "Hel"), d(1, "lo"), d(0, "Second", 2), d(2, "!"));
  assert.deepEqual(
    streamingOf(s, "t1").map((x) => [x.step, x.text, x.gap]),
    [
      [1, "Hello!", false],
      [2, "Second", false],
    ],
  );
});

test("a repeated delta is ignored; a missed one freezes the text; seq 0 again starts the step afresh", () => {
  assert.equal(streamingOf(fold(chat(), d(0, "a"), d(1, "b"), d(1, "b")), "t1")[0]?.text, "ab");
  const gap = streamingOf(fold(chat(), d(0, "a"), d(2, "c"), d(3, "d")), "t1")[0];
  assert.deepEqual([gap?.text, gap?.gap], ["a", true]);
  const retried = streamingOf(fold(chat(), d(0, "a"), d(1, "b"), d(0, "x")), "t1")[0];
  assert.deepEqual([retried?.text, retried?.gap], ["x", false]);
});

test("another chat's deltas and a recorded step's deltas change nothing; the record drops what streamed", () => {
  const model = {
    kind: "model" as const,
    revision: 7,
    at: "",
    turnId: "t1",
    step: 1,
    text: "Hello!",
    finishReason: "stop",
    inputTokens: 1,
    outputTokens: 1,
  };
  const empty: Streaming = new Map();
  assert.equal(applyDelta(empty, chat(), d(0, "x", 1, "other")), empty);
  assert.equal(applyDelta(empty, chat([model]), d(0, "x")), empty);
  assert.equal(applyDelta(empty, null, d(0, "x")), empty);
  const s = fold(chat(), d(0, "Hel"), d(0, "Next", 2));
  const after = dropRecorded(s, chat([model]));
  assert.deepEqual(
    streamingOf(after, "t1").map((x) => x.step),
    [2],
  );
});
