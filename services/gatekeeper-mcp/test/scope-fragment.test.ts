import assert from "node:assert/strict";
import { test } from "node:test";
import { MalformedScopeFragment } from "../src/errors.ts";
import { formatScopeFragment, parseScopeFragment, scopePermits } from "../src/scope-fragment.ts";

test("no fragment permits every tool", () => {
  const s = parseScopeFragment(undefined);
  assert.equal(s.tools, null);
  assert.ok(scopePermits(s, "anything"));
});

test("repeated tool= permits exactly the listed tools", () => {
  const s = parseScopeFragment("tool=read_graph&tool=search_nodes");
  assert.deepEqual([...(s.tools ?? [])].sort(), ["read_graph", "search_nodes"]);
  assert.ok(scopePermits(s, "read_graph"));
  assert.ok(!scopePermits(s, "create_entities"));
});

test("an empty tool= permits nothing", () => {
  const s = parseScopeFragment("tool=");
  assert.equal(s.tools?.size, 0);
  assert.ok(!scopePermits(s, "read_graph"));
});

test("percent-encoded tool names are decoded", () => {
  assert.ok(scopePermits(parseScopeFragment("tool=get%2Dsum"), "get-sum"));
});

const bad: [string, RegExp][] = [
  ["tool=a&mode=x", /part "mode=x".*unknown key "mode"/],
  ["tool=a&tool=a", /part "tool=a" repeats tool "a"/],
  ["tool=a&&tool=b", /empty part/],
  ["tool=a&", /empty part/],
  ["toolname", /part "toolname" is not a key=value pair/],
  ["tool=%E0%A4%A", /part "tool=%E0%A4%A" is not valid percent-encoding/],
  ["server=a&server=b", /part "server=b" is a second server=/],
  ["server=", /part "server=" has an empty server name/],
  ["tool=a=b", /part "tool=a=b" has more than one "="/],
  ["", /scope fragment is empty/],
];
for (const [fragment, message] of bad) {
  test(`malformed fragment "#${fragment}" is refused with an error naming the part`, () => {
    assert.throws(
      () => parseScopeFragment(fragment),
      (e: unknown) => {
        assert.ok(e instanceof MalformedScopeFragment);
        assert.match((e as Error).message, message);
        return true;
      },
    );
  });
}

test("the canonical fragment puts server first and sorts tools, and round-trips", () => {
  const s = parseScopeFragment("tool=b&server=mem&tool=a");
  const f = formatScopeFragment(s);
  assert.equal(f, "server=mem&tool=a&tool=b");
  assert.deepEqual(parseScopeFragment(f), s);
  assert.equal(formatScopeFragment(parseScopeFragment("tool=")), "tool=");
});
