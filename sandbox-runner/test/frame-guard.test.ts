import assert from "node:assert/strict";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { FrameGuard, isCall } from "../src/frame-guard.ts";
import { wipeScratch } from "../src/isolate-host/scratch.ts";

test("calls are recognised by parsing the capnweb message, so whitespace or escapes cannot hide one", () => {
  assert.equal(isCall('["push",["pipeline",0,["add"],[1,2]]]'), true);
  assert.equal(isCall(' [ "push" , ["pipeline",0,["add"]]]'), true);
  assert.equal(isCall('["p\\u0075sh",["pipeline",0,["add"]]]'), true);
  assert.equal(isCall('["stream",["pipeline",1,["write"],[]]]'), true);
  assert.equal(isCall('["pull",1]'), false);
  assert.equal(isCall('["release",1,1]'), false);
  assert.equal(isCall("not json"), true, "an unreadable frame counts as a call (fail closed)");
  assert.equal(isCall('{"push":1}'), true);
});

test("the frame guard refuses the call after the cap and any frame above the size cap, in UTF-8 bytes", () => {
  const guard = new FrameGuard({ maxFrameBytes: 40, maxCalls: 2 });
  assert.equal(guard.check('["push",["pipeline",0,["a"]]]'), null);
  assert.equal(guard.check('["pull",1]'), null);
  assert.equal(guard.check('["push",["pipeline",0,["b"]]]'), null);
  assert.equal(guard.check('["push",["pipeline",0,["c"]]]')?.name, "CallLimitError");
  const sized = new FrameGuard({ maxFrameBytes: 40, maxCalls: 100 });
  // 14 characters of "€" are 42 bytes.
  const refusal = sized.check(`["push","${"€".repeat(14)}"]`);
  assert.equal(refusal?.name, "MessageSizeError");
  assert.match(refusal?.message ?? "", /above the cap of 40 bytes/);
});

test("wiping the scratch dir removes every file and directory in it and keeps the dir", () => {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-scratch-test-"));
  try {
    writeFileSync(join(dir, "left-over"), "x");
    writeFileSync(join(dir, ".hidden"), "x");
    mkdirSync(join(dir, "nested", "deeper"), { recursive: true });
    writeFileSync(join(dir, "nested", "deeper", "file"), "x");
    wipeScratch(dir);
    assert.deepEqual(readdirSync(dir), []);
    wipeScratch(join(dir, "missing"));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("with grants, a call on a binding's main object to a method it was not granted is refused", () => {
  const guard = new FrameGuard(
    { maxFrameBytes: 1000, maxCalls: 100 },
    new Map([["VAULT", new Set(["add"])]]),
  );
  assert.equal(guard.check('["push",["pipeline",0,["add"],[1,2]]]', "VAULT"), null);
  assert.equal(
    guard.check('["push",["pipeline",3,["anything"],[]]]', "VAULT"),
    null,
    "calls on results are the gatekeeper's",
  );
  for (const frame of [
    '["push",["pipeline",0,["secret"],[]]]',
    '["push",["pipeline",0,["add","x"],[]]]',
    '["stream",["pipeline",0,["constructor"]]]',
    '[ "push" , [ "pipeline" , 0 , [ "__proto__" ] ] ]',
  ]) {
    assert.equal(guard.check(frame, "VAULT")?.name, "CapabilityError", frame);
  }
  assert.equal(
    guard.check('["push",["pipeline",0,["add"],[]]]', "OTHER"),
    null,
    "a binding that was not granted is the runner's to drop",
  );
});
