/**
 * The chat routes' mapping at the gateway: AgentChats messages become the contract's shapes (a tool
 * call without its result: `result: null`; no state before a message: null), and the AgentChats
 * error codes (trailing metadata `gatehouse-error-code`) become their HTTP statuses and codes.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { AgentChat } from "@gatehouse/proto";
import { Metadata, status } from "@grpc/grpc-js";
import { Backends, fromGrpcError, HttpError } from "../src/backends.ts";
import { toChat, toChatSummary } from "../src/routes/chat-mapping.ts";

const chat: AgentChat = {
  workspaceId: "w1",
  chatId: "c1",
  startedBy: "user:ada",
  model: "openai-compatible:m",
  startedAt: "2026-12-04T10:00:00.000Z",
  revision: 9,
  turns: [
    {
      turnId: "t1",
      state: "waiting",
      model: "openai-compatible:m",
      maxSteps: 12,
      maxTokens: 1000,
      steps: 1,
      inputTokens: 10,
      outputTokens: 5,
      reason: "",
      message: "",
      awaiting: [8],
    },
  ],
  entries: [
    { revision: 3, at: "a", turnId: "t1", kind: { $case: "user", user: { text: "hi", sentBy: "user:ada" } } },
    {
      revision: 5,
      at: "b",
      turnId: "t1",
      kind: {
        $case: "toolCall",
        toolCall: {
          step: 1,
          toolCallId: "call_1",
          toolName: "executeCode",
          argumentsJson: "{}",
          problem: "",
          executionId: "t1.1.0",
          result: undefined,
          observationIds: [7],
          actionIds: [8],
        },
      },
    },
  ],
};

test("a chat maps to the contract's shape; a tool call without its result has result null", () => {
  const c = toChat(chat);
  assert.equal(c.turns[0]?.state, "waiting");
  assert.deepEqual(c.turns[0]?.awaiting, [8]);
  assert.deepEqual(c.entries[0], {
    kind: "user",
    revision: 3,
    at: "a",
    turnId: "t1",
    text: "hi",
    sentBy: "user:ada",
  });
  const call = c.entries[1];
  assert.equal(call?.kind, "tool_call");
  assert.ok(call?.kind === "tool_call");
  assert.equal(call.result, null);
  assert.deepEqual([call.observationIds, call.actionIds], [[7], [8]]);
});

test("an unknown turn state or entry kind from the service is a 502 naming it, not a silent guess", () => {
  assert.throws(
    () => toChat({ ...chat, turns: [{ ...(chat.turns[0] as AgentChat["turns"][number]), state: "paused" }] }),
    (err: unknown) => err instanceof HttpError && err.statusCode === 502 && /"paused"/.test(err.message),
  );
  assert.throws(
    () => toChat({ ...chat, entries: [{ revision: 4, at: "", turnId: "t1", kind: undefined }] }),
    (err: unknown) => err instanceof HttpError && err.statusCode === 502 && /revision 4/.test(err.message),
  );
  const summary = { chatId: "c", startedBy: "u", model: "m", startedAt: "", title: "", state: "", turns: 0 };
  assert.equal(toChatSummary(summary).state, null);
});

function grpcError(code: status, details: string, errorCode?: string) {
  const metadata = new Metadata();
  if (errorCode) metadata.set("gatehouse-error-code", errorCode);
  return { code, details, metadata };
}

test("AgentChats error codes become 503 agent_off, 409 turn_in_progress / turn_not_open; others by status", () => {
  const off = fromGrpcError(
    grpcError(status.FAILED_PRECONDITION, "set AGENT_PROVIDER", "agent_off"),
    "agent",
  );
  assert.deepEqual([off.statusCode, off.code, off.message], [503, "agent_off", "set AGENT_PROVIDER"]);
  const busy = fromGrpcError(grpcError(status.FAILED_PRECONDITION, "turn t1 …", "turn_in_progress"), "agent");
  assert.deepEqual([busy.statusCode, busy.code], [409, "turn_in_progress"]);
  const ended = fromGrpcError(
    grpcError(status.FAILED_PRECONDITION, "turn t1 ended", "turn_not_open"),
    "agent",
  );
  assert.deepEqual([ended.statusCode, ended.code], [409, "turn_not_open"]);
  assert.equal(fromGrpcError(grpcError(status.NOT_FOUND, "no chat"), "agent").statusCode, 404);
  assert.equal(fromGrpcError(grpcError(status.PERMISSION_DENIED, "not yours"), "agent").statusCode, 403);
  assert.equal(fromGrpcError(grpcError(status.INVALID_ARGUMENT, "empty"), "agent").statusCode, 400);
  // An unknown code falls back to the status.
  const other = fromGrpcError(grpcError(status.FAILED_PRECONDITION, "x", "something_new"), "agent");
  assert.deepEqual([other.statusCode, other.code], [409, "failed_precondition"]);
  // Down is not off.
  const down = fromGrpcError(grpcError(status.UNAVAILABLE, "No connection established"), "agent");
  assert.deepEqual([down.statusCode, down.code], [503, "unavailable"]);
  assert.match(down.message, /the agent service is unavailable/);
});

test("without an agent address every AgentChats call is 503 agent_off naming AGENT_ADDRESS, calling nothing", async () => {
  const backends = new Backends("127.0.0.1:1", "127.0.0.1:1");
  try {
    assert.equal(backends.agent, undefined);
    await assert.rejects(
      backends.agentCall((c) => c.listChats, { workspaceId: "w1" }),
      (err: unknown) =>
        err instanceof HttpError &&
        err.statusCode === 503 &&
        err.code === "agent_off" &&
        /AGENT_ADDRESS/.test(err.message),
    );
  } finally {
    backends.close();
  }
});
