/**
 * The agent loop's pure rules: a tool call is checked before anything runs (unknown tool, malformed
 * JSON, no code, not a module) with a problem the model can act on; the conversation sent to the
 * model is rebuilt from the chat fold, each tool call answered by its recorded result and, once
 * people decided its awaited writes, their outcomes.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { foldChats } from "@gatehouse/agent-core";
import { conversation } from "../src/agent/messages.ts";
import { systemPrompt } from "../src/agent/prompt.ts";
import { checkToolCall } from "../src/agent/tool-call.ts";

test("a tool call that cannot run names its problem; a module with a default export runs", () => {
  assert.match(checkToolCall("shell", "{}").problem, /There is no tool "shell"; call executeCode/);
  assert.match(checkToolCall("executeCode", '{"code": "export def').problem, /not valid JSON/);
  assert.match(checkToolCall("executeCode", '{"script": "x"}').problem, /no "code" string/);
  assert.match(
    checkToolCall("executeCode", '{"code": "console.log(1)"}').problem,
    /not a module with a default export/,
  );
  assert.deepEqual(checkToolCall("executeCode", '{"code": "export default async () => 1"}'), {
    code: "export default async () => 1",
    problem: "",
  });
});

test("the conversation pairs each model answer's tool calls with their results and the people's decisions", () => {
  const at = (revision: number) => ({ revision, metadata: { occurredAt: "2026-01-01T00:00:00Z" } });
  const ev = (type: string, data: Record<string, unknown>) => ({ type, data });
  const events = [
    ev("ChatStarted", { chatId: "c", startedBy: "user:a", surface: "agent", model: "m" }),
    ev("ChatUserMessage", { chatId: "c", turnId: "t", text: "add a note", sentBy: "user:a" }),
    ev("ChatTurnStarted", { chatId: "c", turnId: "t", model: "m", maxSteps: 4, maxTokens: 100 }),
    ev("ChatModelMessage", {
      chatId: "c",
      turnId: "t",
      step: 1,
      text: "writing",
      finishReason: "tool-calls",
    }),
    ev("ChatToolCalled", {
      chatId: "c",
      turnId: "t",
      step: 1,
      toolCallId: "k1",
      toolName: "executeCode",
      argumentsJson: '{"code":"export default async (env) => 1"}',
      executionId: "t.1.0",
    }),
    ev("ChatToolResult", {
      chatId: "c",
      turnId: "t",
      step: 1,
      toolCallId: "k1",
      executionId: "t.1.0",
      ok: true,
      text: "pending",
      awaitedActionIds: [7],
    }),
  ].map((e, i) => ({ ...e, ...at(i) }));
  const chat = foldChats(events).chats.get("c");
  assert.ok(chat);
  const decisions = new Map([
    [
      "t.1.0",
      {
        state: "resumed",
        reason: "",
        results: [{ actionId: 7, status: "applied", resultJson: '{"ok":1}', reason: "" }],
      },
    ],
  ]);
  const messages = conversation(chat, decisions);
  assert.deepEqual(
    messages.map((m) => m.role),
    ["user", "assistant", "tool"],
  );
  const tool = messages[2];
  const value =
    tool?.role === "tool" && tool.content[0]?.type === "tool-result" ? tool.content[0].output : undefined;
  assert.equal(value?.type, "text");
  assert.match(
    String(value && "value" in value ? value.value : ""),
    /pending[\s\S]*action 7: applied, result \{"ok":1\}/,
  );
  assert.match(
    systemPrompt("interface Env { MEMORY: MEMORY; }", 1),
    /executeCode[\s\S]*interface Env \{ MEMORY: MEMORY; \}/,
  );
});
