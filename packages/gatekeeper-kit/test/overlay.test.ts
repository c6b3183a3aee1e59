import assert from "node:assert/strict";
import { test } from "node:test";
import { PendingOverlay } from "../src/overlay.ts";

type Tree = Record<string, string>;
type Commit = { path: string; content: string | null };
const applyCommit = (t: Tree, c: Commit): Tree => {
  const next = { ...t };
  if (c.content === null) delete next[c.path];
  else next[c.path] = c.content;
  return next;
};

test("pending writes apply over the base in submission order", () => {
  const o = new PendingOverlay<Commit>();
  o.add("~1", { path: "a", content: "1" });
  o.add("~2", { path: "a", content: "2" }, ["~1"]);
  o.add("~3", { path: "b", content: null });
  const base = { a: "0", b: "x" };
  assert.deepEqual(o.view(base, applyCommit), { a: "2" });
  assert.deepEqual(base, { a: "0", b: "x" });
  assert.equal(o.size, 3);
});

test("dropping a rejected write drops everything built on it, and reads no longer show them", () => {
  const o = new PendingOverlay<Commit>();
  o.add("~1", { path: "a", content: "A" });
  o.add("~2", { path: "b", content: "B" }, ["~1"]);
  o.add("~3", { path: "c", content: "C" });
  o.add("~4", { path: "d", content: "D" }, ["~2", "~3"]);
  assert.deepEqual(o.drop("~1"), ["~1", "~2", "~4"]);
  assert.deepEqual(o.view({}, applyCommit), { c: "C" });
  assert.deepEqual(o.drop("~1"), []);
});

test("settling an applied write removes it but keeps its dependents pending", () => {
  const o = new PendingOverlay<Commit>();
  o.add("~1", { path: "a", content: "A" });
  o.add("~2", { path: "b", content: "B" }, ["~1"]);
  assert.deepEqual(o.settle("~1"), { path: "a", content: "A" });
  assert.deepEqual(
    o.pending().map((p) => [p.localId, p.dependsOn]),
    [["~2", []]],
  );
  assert.equal(o.settle("~9"), undefined);
  // A later rejection of the applied write cannot take its dependents with it any more.
  assert.deepEqual(o.drop("~1"), []);
  assert.ok(o.has("~2"));
});

test("a duplicate local id is refused, and dependencies that are no longer pending are ignored", () => {
  const o = new PendingOverlay<Commit>();
  o.add("~1", { path: "a", content: "A" }, ["~0"]);
  assert.deepEqual(o.pending()[0]?.dependsOn, []);
  assert.throws(() => o.add("~1", { path: "a", content: "B" }), /~1 is already pending/);
});
