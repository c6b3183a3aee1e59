/**
 * scripts/test-tap.ts reads node:test's TAP: counts summed over runs, TODO tests as known gaps (not
 * failures), failures with their parents' names and diagnostics, top-level durations. The sample is the
 * shape node 20's reporter prints (checked against a real run in the last test).
 */
import assert from "node:assert/strict";
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { summarizeTap } from "../test-tap.ts";

const SAMPLE = `TAP version 13
# Subtest: a suite
    # Subtest: inner passes
    ok 1 - inner passes
      ---
      duration_ms: 1.5
      ...
    # Subtest: inner fails
    not ok 2 - inner fails
      ---
      duration_ms: 2.5
      error: 'boom'
      ...
    1..2
not ok 1 - a suite
  ---
  duration_ms: 1250.25
  failureType: 'subtestsFailed'
  ...
# Subtest: a known gap
not ok 2 - a known gap # TODO FINDING: not built yet
  ---
  duration_ms: 3
  ...
# Subtest: plain
ok 3 - plain
  ---
  duration_ms: 40
  ...
1..3
# tests 4
# pass 2
# fail 1
# todo 1
`;

test("counts, known gaps, failures with their parents and top-level durations", () => {
  const s = summarizeTap(SAMPLE);
  assert.deepEqual([s.pass, s.fail, s.todo], [2, 1, 1]);
  assert.deepEqual(s.todoNames, ["a known gap # TODO FINDING: not built yet"]);
  assert.deepEqual(
    s.failures.map((f) => f.name),
    ["a suite > inner fails", "a suite"],
  );
  assert.ok(s.failures[0]?.diagnostic.some((l) => l.includes("error: 'boom'")));
  assert.deepEqual(s.durations, [
    { name: "a suite", ms: 1250.25 },
    { name: "a known gap", ms: 3 },
    { name: "plain", ms: 40 },
  ]);
});

test("counts of two node --test runs in one unit are summed; output without counts is all zeros", () => {
  const s = summarizeTap(`${SAMPLE}\nsome tsc output\n${SAMPLE}`);
  assert.deepEqual([s.pass, s.fail, s.todo], [4, 2, 2]);
  const none = summarizeTap("Error: Cannot find module 'x'\n");
  assert.deepEqual([none.pass, none.fail, none.todo, none.failures.length], [0, 0, 0, 0]);
});

test("reads what this node's own test runner prints", () => {
  const dir = mkdtempSync(join(tmpdir(), "test-tap-"));
  try {
    writeFileSync(
      join(dir, "a.test.mjs"),
      `import { test, describe } from "node:test";
describe("group", () => { test("fine", () => {}); test("broken", () => { throw new Error("nope"); }); });
test("gap", { todo: "later" }, () => { throw new Error("x"); });
test("quick", () => {});
`,
    );
    // Without NODE_TEST_CONTEXT (set for this file's own process), node prints TAP rather than its
    // internal child-process format.
    const { NODE_TEST_CONTEXT: _, ...env } = process.env;
    const r = spawnSync(process.execPath, ["--test", "a.test.mjs"], { cwd: dir, encoding: "utf8", env });
    const s = summarizeTap(r.stdout);
    assert.deepEqual([s.pass, s.fail, s.todo], [2, 1, 1], r.stdout);
    assert.deepEqual(
      s.failures.map((f) => f.name),
      ["group > broken", "group"],
    );
    assert.match(s.failures[0]?.diagnostic.join("\n") ?? "", /nope/);
    assert.deepEqual(
      s.durations.map((d) => d.name),
      ["group", "gap", "quick"],
    );
    assert.equal(s.todoNames.length, 1);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
