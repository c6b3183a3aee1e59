import assert from "node:assert/strict";
import { test } from "node:test";
import { classifyTool } from "../src/classify.ts";

test("readOnlyHint true (boolean) is a read", () => {
  const c = classifyTool({ name: "read_graph", annotations: { readOnlyHint: true } }, true);
  assert.equal(c.kind, "read");
  assert.equal(c.actionKind.tag, "mcp.tool.read_graph");
});

test('readOnlyHint "true" (a string) is an action', () => {
  const c = classifyTool({ name: "x", annotations: { readOnlyHint: "true" } as never }, true);
  assert.equal(c.kind, "action");
  assert.match(c.classifiedBy, /readOnlyHint="true"/);
});

test("no annotations is an action and never auto-approvable, even on a vetted endpoint", () => {
  const c = classifyTool({ name: "x" }, true);
  assert.equal(c.kind, "action");
  assert.equal(c.autoApprovable, false);
  assert.match(c.classifiedBy, /readOnlyHint absent/);
});

test("vetted + destructiveHint false + idempotentHint true is auto-approvable", () => {
  const c = classifyTool(
    {
      name: "create_directory",
      annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true },
    },
    true,
  );
  assert.deepEqual([c.kind, c.autoApprovable], ["action", true]);
  assert.deepEqual(c.actionKind, { tag: "mcp.tool.create_directory", label: "Create directory" });
});

test("favourable hints on a byo endpoint are not auto-approvable", () => {
  const c = classifyTool({ name: "x", annotations: { destructiveHint: false, idempotentHint: true } }, false);
  assert.equal(c.autoApprovable, false);
  assert.match(c.classifiedBy, /endpoint byo/);
});

test("a missing or non-boolean destructive/idempotent hint is not auto-approvable", () => {
  assert.equal(
    classifyTool({ name: "x", annotations: { idempotentHint: true } }, true).autoApprovable,
    false,
  );
  assert.equal(
    classifyTool({ name: "x", annotations: { destructiveHint: false } }, true).autoApprovable,
    false,
  );
  assert.equal(
    classifyTool(
      { name: "x", annotations: { destructiveHint: "false", idempotentHint: true } as never },
      true,
    ).autoApprovable,
    false,
  );
});

test("an action that is not auto-approvable says every unmet condition and what it must be", () => {
  const byo = classifyTool({ name: "write_file", annotations: { destructiveHint: true } }, false);
  assert.equal(byo.autoApprovable, false);
  assert.match(byo.notAutoApprovableReason, /endpoint byo/);
  assert.match(byo.notAutoApprovableReason, /annotations\.destructiveHint=true \(must be false\)/);
  assert.match(byo.notAutoApprovableReason, /annotations\.idempotentHint absent \(must be true\)/);
  const ok = classifyTool(
    { name: "create_directory", annotations: { destructiveHint: false, idempotentHint: true } },
    true,
  );
  assert.equal(ok.notAutoApprovableReason, "");
});
