/**
 * Decisions name the person at the terminal: with neither GATEHOUSE_USER nor USER set, `approve`
 * and `reject` refuse before calling any service, asking for GATEHOUSE_USER or --by, instead of
 * recording a made-up identity; commands without --by (`workspace create`, `rule`, `mcp serve`)
 * name their own flag or none; `who()` names the person from the environment.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { test } from "node:test";
import { promisify } from "node:util";
import { who } from "../src/commands/shared.ts";

const ROOT = resolve(import.meta.dirname, "../../..");
const MAIN = join(ROOT, "apps/cli/src/main.ts");
const run = promisify(execFile);

/** The environment without GATEHOUSE_USER and USER. */
function nobody(): NodeJS.ProcessEnv {
  const env = { ...process.env };
  delete env.GATEHOUSE_USER;
  delete env.USER;
  return env;
}

test("who() names GATEHOUSE_USER, else USER, and refuses when neither is set (an empty value counts as unset)", (t) => {
  const saved = { g: process.env.GATEHOUSE_USER, u: process.env.USER };
  t.after(() => {
    for (const [k, v] of [
      ["GATEHOUSE_USER", saved.g],
      ["USER", saved.u],
    ] as const) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  });
  process.env.GATEHOUSE_USER = "alice";
  process.env.USER = "bob";
  assert.equal(who(), "user:alice");
  process.env.GATEHOUSE_USER = "";
  assert.equal(who(), "user:bob");
  delete process.env.GATEHOUSE_USER;
  delete process.env.USER;
  assert.throws(() => who("--by"), /set GATEHOUSE_USER or pass --by user:<name>/);
  assert.throws(() => who("--owner"), /set GATEHOUSE_USER or pass --owner user:<name>/);
  assert.throws(
    () => who(),
    (err: Error) => /set GATEHOUSE_USER=<name>/.test(err.message) && !/--by/.test(err.message),
  );
});

for (const args of [
  ["approve", "ws", "1"],
  ["reject", "ws", "1", "--reason", "no"],
]) {
  test(`\`${args[0]}\` with neither GATEHOUSE_USER nor USER set fails asking for one, not as user:cli`, async () => {
    const res = await run(process.execPath, ["--no-node-snapshot", "--import", "tsx", MAIN, ...args], {
      env: nobody(),
    }).then(
      () => assert.fail("expected a refusal"),
      (err: { code: number; stderr: string }) => err,
    );
    assert.equal(res.code, 1);
    assert.match(res.stderr, /set GATEHOUSE_USER or pass --by user:<name>/);
    assert.doesNotMatch(res.stderr, /user:cli/);
  });
}

for (const [args, hint] of [
  [["workspace", "create"], /set GATEHOUSE_USER or pass --owner user:<name>/],
  [["rule", "ws", "MEMORY", "mcp.tool.x"], /set GATEHOUSE_USER=<name> \(this command has no flag for it\)/],
  [["mcp", "--workspace", "ws"], /set GATEHOUSE_USER=<name> \(this command has no flag for it\)/],
] as const) {
  test(`\`${args.join(" ")}\` without a person asks for what that command takes, never a --by it lacks`, async () => {
    const res = await run(process.execPath, ["--no-node-snapshot", "--import", "tsx", MAIN, ...args], {
      env: nobody(),
    }).then(
      () => assert.fail("expected a refusal"),
      (err: { code: number; stderr: string }) => err,
    );
    assert.equal(res.code, 1);
    assert.match(res.stderr, hint);
    assert.doesNotMatch(res.stderr, /--by/);
  });
}
