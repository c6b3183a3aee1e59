import assert from "node:assert/strict";
import { test } from "node:test";
import { InvalidRequest, UnknownAction } from "../src/errors.ts";
import { isProvisionalId, ProvisionalIds } from "../src/provisional-ids.ts";

test("ids are handed out as ~1, ~2, ... per session, independently", () => {
  const a = new ProvisionalIds();
  const b = new ProvisionalIds();
  assert.deepEqual([a.next(), a.next(), a.next()], ["~1", "~2", "~3"]);
  assert.equal(b.next(), "~1");
  assert.ok(a.issued("~3"));
  assert.ok(!a.issued("~4"));
});

test("only ~N with a positive N and no leading zero is provisional", () => {
  assert.ok(isProvisionalId("~12"));
  for (const s of ["~0", "~01", "~", "12", "~1a", "a~1"]) assert.ok(!isProvisionalId(s), s);
});

test("a permanent alias resolves both ways; pending ids resolve to themselves", () => {
  const ids = new ProvisionalIds();
  const c1 = ids.next();
  const c2 = ids.next();
  ids.alias(c1, "3f2a9c");
  ids.alias(c1, "3f2a9c"); // idempotent
  assert.equal(ids.resolve(c1), "3f2a9c");
  assert.equal(ids.resolve(c2), "~2");
  assert.equal(ids.resolve("main"), "main");
  assert.equal(ids.permanentOf(c1), "3f2a9c");
  assert.equal(ids.provisionalOf("3f2a9c"), "~1");
  assert.equal(ids.permanentOf(c2), undefined);
});

test("unknown provisional ids and conflicting aliases are refused with clear errors", () => {
  const ids = new ProvisionalIds();
  const c1 = ids.next();
  const c2 = ids.next();
  assert.throws(() => ids.resolve("~7"), UnknownAction);
  assert.throws(() => ids.alias("~7", "abc"), UnknownAction);
  ids.alias(c1, "abc");
  assert.throws(
    () => ids.alias(c1, "def"),
    (e: Error) => e instanceof InvalidRequest && /already became abc/.test(e.message),
  );
  assert.throws(() => ids.alias(c2, "abc"), /already the permanent id of ~1/);
  assert.throws(() => ids.alias(c2, "~1"), /non-provisional/);
  assert.throws(() => ids.alias(c2, ""), /non-provisional/);
});
