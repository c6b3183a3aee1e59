/**
 * The built-in agent's tool result text keeps the MCP surface's facts but drops advice its model cannot
 * follow: no `timeout_seconds`, no `wait_for_decisions`, no structured content.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ExecuteResult } from "@gatehouse/proto";
import { executeCodeToolDescription } from "../src/agent/prompt.ts";
import { builtinResultText, SNIPPET_WALL_MS } from "../src/agent/result-text.ts";

const base: ExecuteResult = {
  ok: true,
  returnJson: "1",
  console: [],
  error: undefined,
  durationMs: 5,
  outputTruncated: false,
  warnings: [],
  executionId: "t.1.0",
  turnId: "",
  submitted: [],
  observed: [],
};

const MCP_ONLY = /timeout_seconds|wait_for_decisions|structuredContent|execute_code/;

test("a timeout names the built-in agent's fixed wall time, not execute_code's timeout_seconds", () => {
  for (const message of [
    "the snippet ran longer than the wall-time limit of 30000 ms (limits.wall_time_ms); do less per execution or raise the limit",
    "the snippet ran longer than the wall-time limit of 30000 ms (limits.wall_time_ms) and did not stop; its sandbox was killed",
  ]) {
    const text = builtinResultText({
      ...base,
      ok: false,
      returnJson: "",
      error: { name: "TimeoutError", message, line: 0, column: 0, stack: "" },
    });
    assert.doesNotMatch(text, MCP_ONLY);
    assert.match(text, /; do less per execution \(a snippet may run at most 30 s\)$/);
  }
});

test("awaited writes say the turn waits for people, and many reads name no structured content", () => {
  const text = builtinResultText({
    ...base,
    turnId: "kt-9",
    submitted: [{ actionId: 4, binding: "MEMORY", title: "Create entity", awaited: true }],
    observed: Array.from({ length: 25 }, (_, i) => ({ id: i + 1, binding: "MEMORY", title: "Read" })),
  });
  assert.doesNotMatch(text, MCP_ONLY);
  assert.match(
    text,
    /This turn now waits until people decide the awaited writes; you will then see each one's outcome/,
  );
  assert.match(text, /… and 5 more \(log ids 21 to 25\)$/m);
  assert.match(text, /action 4 MEMORY: Create entity — awaited/);
});

test("the executeCode tool's description gives the built-in wall time and names no MCP-only tool or option", () => {
  for (const bindings of [0, 2]) {
    const d = executeCodeToolDescription("interface Env { GIT: unknown }", bindings);
    assert.doesNotMatch(d, /timeout_seconds|wait_for_decisions/);
    assert.match(d, new RegExp(`wall time ${SNIPPET_WALL_MS / 1000} s`));
    assert.match(d, /this turn waits for people's decisions/);
  }
});
