/** What an agent reads back: execute_code and wait_for_decisions results as text and structured content. */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { ExecuteResult, Turn } from "@gatehouse/proto";
import {
  executeCodeContent,
  executeCodeResult,
  executeResultText,
  LARGE_RETURN_BYTES,
  turnContent,
  turnResultText,
} from "../src/result-text.ts";
import { executeCodeDescription, executeCodeOutput } from "../src/tools/execute-code.ts";
import { waitForDecisionsOutput } from "../src/tools/wait-for-decisions.ts";

const base: ExecuteResult = {
  ok: true,
  returnJson: '{"n":2}',
  console: [
    { level: "log", text: "hello" },
    { level: "warn", text: "careful" },
  ],
  error: undefined,
  durationMs: 41,
  outputTruncated: false,
  warnings: [],
  executionId: "e-1",
  turnId: "",
  submitted: [],
  observed: [{ id: 3, binding: "MEMORY", title: "Read the graph" }],
};

test("an ok result shows console output, the return value and the reads recorded", () => {
  const text = executeResultText(base);
  assert.match(text, /^The snippet finished in 41 ms \(execution e-1\)\./);
  assert.match(text, /\nhello\n\[warn\] careful\n/);
  assert.match(text, /Returned: \{"n":2\}/);
  assert.match(text, /#3 MEMORY: Read the graph/);
  assert.doesNotMatch(text, /wait_for_decisions/);
  const content = executeCodeContent(base);
  assert.deepEqual(content.returnValue, { n: 2 });
  assert.equal(content.turnId, undefined);
  executeCodeOutput.parse(content);
});

test("submitted writes say how each behaves, and an awaited one names the turn and the call to make", () => {
  const r: ExecuteResult = {
    ...base,
    turnId: "e-1",
    submitted: [
      { actionId: 5, binding: "REPO", title: "Commit add notes", awaited: false },
      { actionId: 6, binding: "MEMORY", title: "Create entities", awaited: true },
    ],
  };
  const text = executeResultText(r);
  assert.match(text, /action 5 REPO: Commit add notes — simulated: later reads already show it/);
  assert.match(text, /action 6 MEMORY: Create entities — awaited: applied only once a person approves it/);
  assert.match(text, /Call wait_for_decisions with turn_id "e-1"/);
  const content = executeCodeContent(r);
  assert.equal(content.turnId, "e-1");
  assert.deepEqual(
    content.submitted.map((a) => [a.actionId, a.awaited]),
    [
      [5, false],
      [6, true],
    ],
  );
  executeCodeOutput.parse(content);
});

test("a failed snippet names the error and its line, and keeps the writes it submitted before failing", () => {
  const r: ExecuteResult = {
    ...base,
    ok: false,
    returnJson: "",
    error: { name: "TypeError", message: "x is not a function", stack: "", line: 4, column: 9 },
    submitted: [{ actionId: 7, binding: "MEMORY", title: "Create entities", awaited: true }],
    turnId: "e-1",
  };
  const text = executeResultText(r);
  assert.match(
    text,
    /failed after 41 ms \(execution e-1\): TypeError: x is not a function \(line 4:9 of the snippet\)/,
  );
  assert.doesNotMatch(text, /Returned:/);
  assert.match(text, /action 7 MEMORY/);
  assert.match(text, /turn_id "e-1"/);
  const content = executeCodeContent(r);
  assert.deepEqual(content.error, { name: "TypeError", message: "x is not a function", line: 4, column: 9 });
  assert.equal(content.returnValue, undefined);
  executeCodeOutput.parse(content);
});

test("a limit error tells the agent what it can do: a timeout names timeout_seconds, the heap is fixed by the deployment", () => {
  const failed = (name: string, message: string): ExecuteResult => ({
    ...base,
    ok: false,
    returnJson: "",
    error: { name, message, stack: "", line: 0, column: 0 },
  });
  const timeout = failed(
    "TimeoutError",
    "the snippet ran longer than the wall-time limit of 2000 ms (limits.wall_time_ms); do less per execution or raise the limit",
  );
  const heap = failed(
    "HeapLimitError",
    "the snippet exceeded the heap limit of 64 MiB (limits.heap_mb); work on less data at once or raise the limit",
  );
  for (const [r, hint] of [
    [
      timeout,
      /limit of 2000 ms \(limits.wall_time_ms\); do less per execution, or pass execute_code a larger timeout_seconds \(at most 300\)$/,
    ],
    [
      heap,
      /limit of 64 MiB \(limits.heap_mb\); use less memory \(work on less data at once\); the heap limit is fixed by the deployment$/,
    ],
  ] as const) {
    assert.doesNotMatch(executeResultText(r), /raise the limit/);
    assert.match(executeResultText(r).split("\n")[0] ?? "", hint);
    assert.match(executeCodeContent(r).error?.message ?? "", hint);
  }
  // The runner's other timeout message (a sandbox that did not stop) gets the same hint.
  const killed = failed(
    "TimeoutError",
    "the snippet ran longer than the wall-time limit of 2000 ms (limits.wall_time_ms) and did not stop; its sandbox was killed",
  );
  assert.match(
    executeResultText(killed),
    /its sandbox was killed; do less per execution, or pass execute_code a larger timeout_seconds/,
  );
  // Other errors are unchanged.
  assert.equal(executeCodeContent(failed("TypeError", "raise the limit")).error?.message, "raise the limit");
});

test("a snippet that read many pages lists the first reads and sums up the rest", () => {
  const observed = Array.from({ length: 25 }, (_, i) => ({
    id: 10 + i,
    binding: "REPO",
    title: `Read page ${i}`,
  }));
  const text = executeResultText({ ...base, observed });
  assert.match(text, /Reads recorded in the workspace log \(25\):/);
  assert.match(
    text,
    /#29 REPO: Read page 19\n {2}… and 5 more \(log ids 30 to 34; all in structuredContent.observed\)/,
  );
  assert.doesNotMatch(text, /Read page 20/);
  assert.equal(executeCodeContent({ ...base, observed }).observed.length, 25);
});

const turn: Turn = {
  workspaceId: "w1",
  turnId: "e-1",
  state: "suspended",
  awaitedActionIds: [6, 8],
  results: [],
  reason: "",
};

test("a turn still suspended says so and to call again", () => {
  assert.match(
    turnResultText(turn, 50),
    /Still waiting after 50 s: .*actions 6, 8.*Call wait_for_decisions again with turn_id "e-1"/s,
  );
  const content = turnContent(turn);
  assert.equal(content.stillWaiting, true);
  waitForDecisionsOutput.parse(content);
});

test("a resumed turn lists each result; a completed one gives the reason and each outcome", () => {
  const resumed: Turn = {
    ...turn,
    state: "resumed",
    results: [
      { actionId: 6, status: "applied", resultJson: '[{"name":"A"}]', reason: "" },
      { actionId: 8, status: "applied", resultJson: "", reason: "" },
    ],
  };
  const text = turnResultText(resumed, 3);
  assert.match(text, /^Turn e-1 resumed: every awaited write \(actions 6, 8\) was approved and applied\./);
  assert.match(text, /action 6: applied\n {4}result: \[\{"name":"A"\}\]/);
  const content = turnContent(resumed);
  assert.deepEqual(content.results[0]?.result, [{ name: "A" }]);
  assert.equal(content.stillWaiting, false);
  waitForDecisionsOutput.parse(content);

  const completed: Turn = {
    ...turn,
    state: "completed",
    reason: "action 8 was rejected: not today",
    results: [{ actionId: 8, status: "rejected", resultJson: "", reason: "not today" }],
  };
  const done = turnResultText(completed, 3);
  assert.match(done, /completed without resuming: action 8 was rejected: not today/);
  assert.match(done, /action 6: no result recorded/);
  assert.match(done, /action 8: rejected — not today/);
});

test("execute_code's description holds the env .d.ts, or says env is empty", () => {
  const dts = "declare interface MEMORY { read_graph(args: {}): Promise<unknown>; }\n";
  const d = executeCodeDescription(dts, 1);
  assert.ok(d.includes(dts.trimEnd()));
  assert.match(d, /simulated/);
  assert.match(d, /wait_for_decisions/);
  assert.match(executeCodeDescription("interface Env {\n}\n", 0), /no bindings yet/);
});

test("a large return value is sent once: in its own text block, left out of structuredContent, which says where it is and still matches the schema", () => {
  const value = { rows: "x".repeat(LARGE_RETURN_BYTES) };
  const r: ExecuteResult = { ...base, returnJson: JSON.stringify(value) };
  const out = executeCodeResult(r);
  assert.equal(out.content.length, 2);
  assert.match(
    out.content[0]!.text,
    new RegExp(`Returned: ${r.returnJson.length} bytes of JSON, the next content block`),
  );
  assert.doesNotMatch(out.content[0]!.text, /xxxx/);
  assert.deepEqual(JSON.parse(out.content[1]!.text), value);
  assert.equal(out.structuredContent.returnValue, undefined);
  assert.equal(out.structuredContent.returnValueInContent, true);
  executeCodeOutput.parse(out.structuredContent);
  const whole = JSON.stringify(out);
  assert.equal(
    whole.split("x".repeat(1000)).length - 1,
    Math.floor(LARGE_RETURN_BYTES / 1000),
    "the value is in the result once",
  );
});

test("a return value up to the limit is in the text and in structuredContent.returnValue, one content block", () => {
  const value = "y".repeat(LARGE_RETURN_BYTES - 2);
  const r: ExecuteResult = { ...base, returnJson: JSON.stringify(value) };
  assert.equal(Buffer.byteLength(r.returnJson), LARGE_RETURN_BYTES);
  const out = executeCodeResult(r);
  assert.equal(out.content.length, 1);
  assert.ok(out.content[0]!.text.includes(`Returned: ${r.returnJson}`));
  assert.equal(out.structuredContent.returnValue, value);
  assert.equal(out.structuredContent.returnValueInContent, undefined);
});

test("a failed snippet's result has no return value block, whatever the return JSON", () => {
  const r: ExecuteResult = {
    ...base,
    ok: false,
    returnJson: JSON.stringify("z".repeat(LARGE_RETURN_BYTES * 2)),
    error: { name: "Error", message: "boom", line: 1, column: 1, stack: "" },
  };
  const out = executeCodeResult(r);
  assert.equal(out.content.length, 1);
  assert.equal(out.isError, true);
  assert.equal(out.structuredContent.returnValueInContent, undefined);
});
