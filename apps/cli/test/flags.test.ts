/** The CLI's own parsing and wording, without services: durations, service errors in CLI terms, the "cannot reach" hint. */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { unreachableHint } from "../src/clients.ts";
import { parseDuration } from "../src/commands/shared.ts";
import { cliWording, formatDuration } from "../src/error-text.ts";

test("a duration flag takes a unit (ms, s, m, h); a bare number keeps the flag's old unit; anything else is refused naming the flag", () => {
  assert.equal(parseDuration("500ms", "--timeout", "s"), 500);
  assert.equal(parseDuration("30s", "--timeout", "ms"), 30_000);
  assert.equal(parseDuration("2m", "--timeout", "ms"), 120_000);
  assert.equal(parseDuration("1.5h", "--timeout", "ms"), 5_400_000);
  assert.equal(parseDuration("30", "--timeout", "s"), 30_000);
  assert.equal(parseDuration("30", "--timeout", "ms"), 30);
  for (const bad of ["", "soon", "-5s", "0s", "0", "5 parsecs", "s5"]) {
    assert.throws(
      () => parseDuration(bad, "--timeout", "ms"),
      /^Error: --timeout must be a positive duration with a unit, e\.g\. 500ms, 30s or 2m/,
      bad,
    );
  }
});

test("a zero or bare duration is refused saying what is accepted, without a deprecation note; --stall-timeout takes no bare numbers", (t) => {
  const notes: string[] = [];
  t.mock.method(process.stderr, "write", (chunk: string) => notes.push(chunk) > 0);
  const accepted =
    /^Error: --stall-timeout must be a positive duration with a unit, e\.g\. 500ms, 30s or 2m \(got "(0|30|0s)"\)$/;
  for (const bad of ["0", "30", "0s"])
    assert.throws(() => parseDuration(bad, "--stall-timeout"), accepted, bad);
  assert.throws(() => parseDuration("0", "--timeout", "ms"), /--timeout must be a positive duration/);
  assert.deepEqual(notes, [], "no note about bare numbers for a value that is refused anyway");
  assert.equal(parseDuration("2m", "--stall-timeout"), 120_000);
});

test("limits print as durations a flag takes", () => {
  assert.equal(formatDuration(300_000), "5m");
  assert.equal(formatDuration(10_000), "10s");
  assert.equal(formatDuration(3_600_000), "1h");
  assert.equal(formatDuration(1500), "1500ms");
  assert.equal(formatDuration(250), "250ms");
});

test("service errors are reworded in the CLI's terms: flags, arguments and commands instead of fields and RPCs", () => {
  const table: Array<[string, string]> = [
    [
      "reason: a rejection needs a reason (it is shown to the agent and in the log); set reason",
      "--reason: a rejection needs a reason (it is shown to the agent and in the log); pass --reason",
    ],
    [
      'action_id: workspace "w" has no action 9; list actions with ListActions (CLI: gatehouse actions <workspace>) to find its id',
      '<id>: workspace "w" has no action 9; list actions with `gatehouse actions <workspace>` to find its id',
    ],
    [
      "action 3 depends on undecided action(s) 1, 2; decide them first or set include_dependencies (CLI: gatehouse approve --with-deps) to approve them too",
      "action 3 depends on undecided action(s) 1, 2; decide them first or use `gatehouse approve --with-deps` to approve them too",
    ],
    [
      'workspace_id: workspace "w" does not exist; create it first or check the id',
      '<workspace>: workspace "w" does not exist; create it first or check the id',
    ],
    [
      "turn_id is required (the execution id printed by `gatehouse exec`)",
      "<turn-id> is required (the execution id printed by `gatehouse exec`)",
    ],
    ["limits.wallTimeMs must be at most 300000", "--timeout must be at most 5m"],
    [
      "until_revision: must be a stream revision (0 or more), or absent for the whole stream",
      "--until: must be a stream revision (0 or more), or absent for the whole stream",
    ],
    // Prose that merely contains a field's word is left alone.
    ["the reason was too long; nothing was changed", "the reason was too long; nothing was changed"],
    [
      'binding "MEMORY" is not a binding of this workspace',
      'binding "MEMORY" is not a binding of this workspace',
    ],
  ];
  for (const [service, cli] of table) assert.equal(cliWording(service), cli);
});

test("the cannot-reach hint without a dev.json names the data dir looked in and GATEHOUSE_DATA_DIR", () => {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-hint-"));
  const saved = { ...process.env };
  try {
    process.env.GATEHOUSE_DATA_DIR = dir;
    delete process.env.GATEHOUSE_APPROVAL_ADDRESS;
    const hint = unreachableHint("approval");
    assert.match(hint, /^cannot reach the approval service at 127\.0\.0\.1:7002 \(the default: there is no /);
    assert.ok(hint.includes(`${join(dir, "dev.json")}; GATEHOUSE_DATA_DIR=${dir})`), hint);
    assert.match(hint, /if it runs with GATEHOUSE_DATA_DIR set, set the same GATEHOUSE_DATA_DIR here/);
    process.env.GATEHOUSE_APPROVAL_ADDRESS = "127.0.0.1:1";
    assert.match(unreachableHint("approval"), /at 127\.0\.0\.1:1 \(from GATEHOUSE_APPROVAL_ADDRESS\)/);
  } finally {
    process.env = saved;
    rmSync(dir, { recursive: true, force: true });
  }
});
