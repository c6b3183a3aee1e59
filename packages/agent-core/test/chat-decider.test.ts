/** The chat decider as tables: given events / when command / then events (or error). */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  type ChatCommand,
  type ChatEvent,
  ChatExists,
  ChatInvalid,
  ChatNotFound,
  decideChat,
  NotChatOwner,
  TurnInProgress,
  TurnNotOpen,
} from "../src/index.ts";
import {
  given,
  modelSaid,
  started,
  toolCalled,
  toolResult,
  turnEnded,
  turnStarted,
  userMessage,
} from "./helpers.ts";

interface Row {
  name: string;
  given: ChatEvent[];
  when: ChatCommand;
  expect?: Array<{ type: string; data: unknown }>;
  error?: new (...args: never[]) => Error;
}

const send = (turnId: string, text = "do it", sentBy = "user:ann"): ChatCommand => ({
  type: "SendMessage",
  chatId: "c1",
  turnId,
  text,
  sentBy,
  model: "openai-compatible:m",
  maxSteps: 8,
  maxTokens: 1000,
});
const running = [started(), userMessage("t1"), turnStarted("t1")];
const modelCmd: ChatCommand = {
  type: "RecordModelMessage",
  chatId: "c1",
  turnId: "t1",
  step: 1,
  text: "x",
  finishReason: "stop",
  inputTokens: 1,
  outputTokens: 2,
};

const rows: Row[] = [
  {
    name: "starting a chat records who started it, over the agent surface, with its model",
    given: [],
    when: { type: "StartChat", chatId: "c1", startedBy: "user:ann", model: "anthropic:claude" },
    expect: [
      {
        type: "ChatStarted",
        data: { chatId: "c1", startedBy: "user:ann", surface: "agent", model: "anthropic:claude" },
      },
    ],
  },
  {
    name: "a chat id is started once",
    given: [started()],
    when: { type: "StartChat", chatId: "c1", startedBy: "user:ann", model: "" },
    error: ChatExists,
  },
  {
    name: "a chat id with a slash is refused",
    given: [],
    when: { type: "StartChat", chatId: "a/b", startedBy: "user:ann", model: "" },
    error: ChatInvalid,
  },
  {
    name: "a message starts a turn: the user message then the turn with its limits",
    given: [started()],
    when: send("t1", "list things"),
    expect: [
      {
        type: "ChatUserMessage",
        data: { chatId: "c1", turnId: "t1", text: "list things", sentBy: "user:ann" },
      },
      {
        type: "ChatTurnStarted",
        data: { chatId: "c1", turnId: "t1", model: "openai-compatible:m", maxSteps: 8, maxTokens: 1000 },
      },
    ],
  },
  {
    name: "a message while a turn runs is refused, naming the turn",
    given: running,
    when: send("t2"),
    error: TurnInProgress,
  },
  { name: "an empty message is refused", given: [started()], when: send("t1", "   "), error: ChatInvalid },
  {
    name: "a message larger than 32 KiB is refused",
    given: [started()],
    when: send("t1", "x".repeat(32 * 1024 + 1)),
    error: ChatInvalid,
  },
  {
    name: "only the person who started the chat sends to it",
    given: [started()],
    when: send("t1", "hi", "user:bob"),
    error: NotChatOwner,
  },
  { name: "a message to an unknown chat is refused", given: [], when: send("t1"), error: ChatNotFound },
  {
    name: "a message to an MCP chat is refused (its conversation is the client's)",
    given: [
      { type: "ChatStarted", data: { chatId: "c1", startedBy: "user:ann", surface: "mcp-http", model: "" } },
    ],
    when: send("t1"),
    error: ChatNotFound,
  },
  {
    name: "after a turn ended, the next message starts the next turn",
    given: [...running, turnEnded("t1")],
    when: send("t2"),
    expect: [
      { type: "ChatUserMessage", data: { chatId: "c1", turnId: "t2", text: "do it", sentBy: "user:ann" } },
      {
        type: "ChatTurnStarted",
        data: { chatId: "c1", turnId: "t2", model: "openai-compatible:m", maxSteps: 8, maxTokens: 1000 },
      },
    ],
  },
  {
    name: "a turn id is never reused",
    given: [...running, turnEnded("t1")],
    when: send("t1"),
    error: ChatInvalid,
  },
  {
    name: "a model message is recorded once per step (a retried activity appends nothing)",
    given: [...running, modelSaid("t1", 1)],
    when: modelCmd,
    expect: [],
  },
  {
    name: "a model message for a turn that does not exist is refused",
    given: [started()],
    when: modelCmd,
    error: TurnNotOpen,
  },
  {
    name: "nothing is recorded into an ended turn",
    given: [...running, turnEnded("t1")],
    when: modelCmd,
    expect: [],
  },
  {
    name: "a tool call is recorded once",
    given: [...running, toolCalled("t1", 1, "k", "t1.1.0")],
    when: {
      type: "RecordToolCall",
      chatId: "c1",
      turnId: "t1",
      step: 1,
      toolCallId: "k",
      toolName: "executeCode",
      argumentsJson: "{}",
      problem: "",
      executionId: "t1.1.0",
    },
    expect: [],
  },
  {
    name: "a result needs its tool call",
    given: running,
    when: {
      type: "RecordToolResult",
      chatId: "c1",
      turnId: "t1",
      step: 1,
      toolCallId: "k",
      executionId: "",
      ok: true,
      text: "",
      awaitedActionIds: [],
    },
    error: TurnNotOpen,
  },
  {
    name: "a result is recorded once",
    given: [...running, toolCalled("t1", 1, "k", "t1.1.0"), toolResult("t1", 1, "k", "t1.1.0")],
    when: {
      type: "RecordToolResult",
      chatId: "c1",
      turnId: "t1",
      step: 1,
      toolCallId: "k",
      executionId: "t1.1.0",
      ok: true,
      text: "",
      awaitedActionIds: [],
    },
    expect: [],
  },
  {
    name: "ending a turn records its reason with the steps and tokens used",
    given: [...running, modelSaid("t1", 1, "", [100, 20]), modelSaid("t1", 2, "", [150, 30])],
    when: { type: "EndTurn", chatId: "c1", turnId: "t1", reason: "step_cap", message: "2 model calls" },
    expect: [
      {
        type: "ChatTurnEnded",
        data: {
          chatId: "c1",
          turnId: "t1",
          reason: "step_cap",
          message: "2 model calls",
          steps: 2,
          inputTokens: 250,
          outputTokens: 50,
        },
      },
    ],
  },
  {
    name: "a turn ends once",
    given: [...running, turnEnded("t1")],
    when: { type: "EndTurn", chatId: "c1", turnId: "t1", reason: "cancelled", message: "" },
    expect: [],
  },
  {
    name: "cancelling an ended turn is refused",
    given: [...running, turnEnded("t1")],
    when: { type: "CheckCancel", chatId: "c1", turnId: "t1", by: "user:ann" },
    error: TurnNotOpen,
  },
  {
    name: "only the chat's person cancels its turn",
    given: running,
    when: { type: "CheckCancel", chatId: "c1", turnId: "t1", by: "user:bob" },
    error: NotChatOwner,
  },
  {
    name: "cancelling a running turn is allowed (it appends nothing itself)",
    given: running,
    when: { type: "CheckCancel", chatId: "c1", turnId: "t1", by: "user:ann" },
    expect: [],
  },
];

describe("chat decider", () => {
  for (const row of rows) {
    test(row.name, () => {
      const state = given(row.given);
      if (row.error) {
        const type = row.error;
        assert.throws(
          () => decideChat(row.when, state),
          (err: Error) => err instanceof type,
        );
      } else {
        assert.deepEqual(
          decideChat(row.when, state).map((e) => ({ type: e.type, data: e.data })),
          row.expect,
        );
      }
    });
  }
});
