/**
 * The chat projection: replaying the stream rebuilds each conversation in order, with each tool
 * call's reads and writes under the same log ids (stream revisions) the action log uses, and each
 * turn's state (running, waiting for people, ended with its reason).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { evolveChats, foldChats, initialChats } from "../src/index.ts";
import {
  given,
  kernelTurnResumed,
  modelSaid,
  observed,
  started,
  stored,
  submitted,
  toolCalled,
  toolResult,
  turnEnded,
  turnStarted,
  userMessage,
} from "./helpers.ts";

const conversation = [
  started(), // 0
  userMessage("t1", "list the entities"), // 1
  turnStarted("t1"), // 2
  modelSaid("t1", 1, "reading"), // 3
  toolCalled("t1", 1, "call1", "t1.1.0"), // 4
  observed("t1.1.0"), // 5
  submitted("t1.1.0", "~1"), // 6
  observed("other-execution"), // 7: not this chat's
  toolResult("t1", 1, "call1", "t1.1.0"), // 8
  modelSaid("t1", 2, "done: 2 entities"), // 9
  turnEnded("t1"), // 10
];

test("replay rebuilds the conversation in stream order with each tool call's observation and action ids", () => {
  const chat = given(conversation).chats.get("c1");
  assert.ok(chat);
  assert.deepEqual(
    chat.entries.map((e) => [e.kind, e.revision]),
    [
      ["user", 1],
      ["model", 3],
      ["tool_call", 4],
      ["model", 9],
      ["turn_ended", 10],
    ],
  );
  const call = chat.entries[2];
  assert.equal(call?.kind, "tool_call");
  if (call?.kind !== "tool_call") return;
  assert.deepEqual(call.observationIds, [5]);
  assert.deepEqual(call.actionIds, [6]);
  assert.equal(call.result?.revision, 8);
  assert.deepEqual(
    chat.turns.map((t) => [t.turnId, t.state, t.reason, t.steps, t.inputTokens, t.outputTokens]),
    [["t1", "ended", "done", 2, 20, 10]],
  );
});

test("folding event by event equals folding the whole stream (the live view cannot drift from replay)", () => {
  let live = initialChats();
  conversation.forEach((e, i) => {
    live = evolveChats(live, stored(e, i));
  });
  assert.deepEqual(live, foldChats(conversation.map((e, i) => stored(e, i))));
});

test("replay up to a revision gives the chat as it was then: the turn running mid-way", () => {
  const chat = given(conversation.slice(0, 6)).chats.get("c1");
  assert.equal(chat?.turns[0]?.state, "running");
  assert.equal(chat?.entries.length, 3);
});

test("an awaited write puts the turn in waiting until the kernel's turn for that execution ends", () => {
  const events = [
    started(),
    userMessage("t1"),
    turnStarted("t1"),
    modelSaid("t1", 1),
    toolCalled("t1", 1, "call1", "t1.1.0"),
    submitted("t1.1.0", "~1"), // 5
    toolResult("t1", 1, "call1", "t1.1.0", [5]),
  ];
  const waiting = given(events).chats.get("c1")?.turns[0];
  assert.equal(waiting?.state, "waiting");
  assert.deepEqual(waiting?.awaiting, [5]);
  const resumed = given([...events, kernelTurnResumed("t1.1.0")]).chats.get("c1")?.turns[0];
  assert.equal(resumed?.state, "running");
  assert.deepEqual(resumed?.awaiting, []);
  const other = given([...events, kernelTurnResumed("another")]).chats.get("c1")?.turns[0];
  assert.equal(other?.state, "waiting", "another execution's turn does not resume this one");
});

test("a repeated Chat* event (a retried append) changes nothing, and events of unknown chats are ignored", () => {
  const once = given(conversation);
  const twice = given([
    ...conversation.slice(0, 5),
    toolCalled("t1", 1, "call1", "t1.1.0"),
    ...conversation.slice(5, 10),
    modelSaid("t1", 2, "again"),
    turnEnded("t1"),
    toolResult("t1", 1, "call1", "t1.1.0"),
  ]);
  assert.deepEqual(
    twice.chats.get("c1")?.entries.map((e) => e.kind),
    once.chats.get("c1")?.entries.map((e) => e.kind),
  );
  const stray = given([userMessage("t9", "x", "nope"), turnStarted("t9", "nope")]);
  assert.equal(stray.chats.size, 0);
});

test("a tool call with a problem is recorded without execution and links nothing", () => {
  const chat = given([
    started(),
    userMessage("t1"),
    turnStarted("t1"),
    toolCalled("t1", 1, "bad", "", "arguments are not JSON"),
    observed(""),
  ]).chats.get("c1");
  const call = chat?.entries.find((e) => e.kind === "tool_call");
  assert.equal(call?.kind === "tool_call" && call.problem, "arguments are not JSON");
  assert.deepEqual(call?.kind === "tool_call" && call.observationIds, []);
});
