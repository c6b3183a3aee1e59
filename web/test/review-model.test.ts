/**
 * The review page's model (src/reviewModel.ts, src/reviewPath.ts): groups by binding and kind with
 * the varying field names as columns; holding an action names its included dependents
 * (transitively); an included action names its held dependencies; the batch's digests cover
 * exactly the included actions; selections from the query (execution, turn prefix, ids).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { Action } from "@gatehouse/gateway-contract";
import {
  blockedByHeld,
  dependentsOf,
  digestsOf,
  groupActions,
  heldDependenciesOf,
} from "../src/reviewModel.ts";
import { inSelection, reviewPath, selectionOf } from "../src/reviewPath.ts";

const act = (
  id: number,
  binding: string,
  tag: string,
  dependsOn: number[] = [],
  fields: [string, string][] = [],
) =>
  ({
    id,
    binding,
    actionKind: { tag, label: tag },
    dependsOn,
    fields: fields.map(([name, value]) => ({ name, value })),
    descriptionDigest: `d${id}`,
    risks: [],
  }) as unknown as Action;

const entity = act(1, "MEMORY", "create_entities", [], [["names", "Alpha"]]);
const other = act(2, "MEMORY", "create_entities", [], [["names", "Beta"]]);
const relation = act(3, "MEMORY", "create_relations", [1, 2], [["from", "Alpha"]]);
const observation = act(4, "MEMORY", "add_observations", [3]);
const file = act(5, "FILES", "write_file", [], [["path", "a.md"]]);
const all = [entity, other, relation, observation, file];

test("actions group by binding and kind in order of first appearance; columns are every field name seen", () => {
  const groups = groupActions([entity, file, other, relation]);
  assert.deepEqual(
    groups.map((g) => [g.key, g.actions.map((a) => a.id), g.columns]),
    [
      ["MEMORY/create_entities", [1, 2], ["names"]],
      ["FILES/write_file", [5], ["path"]],
      ["MEMORY/create_relations", [3], ["from"]],
    ],
  );
});

test("holding an entity names every included action depending on it, transitively", () => {
  const included = new Set([2, 3, 4, 5]);
  assert.deepEqual(dependentsOf(1, all, included), [3, 4]);
  assert.deepEqual(dependentsOf(1, all, new Set([2, 4, 5])), [4], "a dependent already held is not named");
  assert.deepEqual(dependentsOf(5, all, included), []);
});

test("an included action names its held dependencies, transitively", () => {
  assert.deepEqual(heldDependenciesOf(4, all, new Set([2, 4, 5])), [1, 3]);
  assert.deepEqual(heldDependenciesOf(4, all, new Set([1, 2, 3, 4, 5])), []);
});

test("the page's map of blocked actions agrees with heldDependenciesOf for every action", () => {
  for (const included of [new Set([1, 2, 3, 4, 5]), new Set([2, 4, 5]), new Set([1, 3, 4]), new Set([4])]) {
    const expected = new Map(
      all
        .filter((a) => included.has(a.id))
        .map((a) => [a.id, heldDependenciesOf(a.id, all, included)] as const)
        .filter(([, deps]) => deps.length > 0),
    );
    assert.deepEqual(blockedByHeld(all, included), expected, `included ${[...included]}`);
  }
});

test("only included actions downstream of a held one are blocked, in a chain of thousands", () => {
  const chain = Array.from({ length: 5000 }, (_, i) =>
    act(i + 1, "MEMORY", "create_entities", i > 0 ? [i] : []),
  );
  assert.equal(blockedByHeld(chain, new Set(chain.map((a) => a.id))).size, 0);
  assert.deepEqual(blockedByHeld(chain, new Set(chain.slice(0, 4998).map((a) => a.id))), new Map());
  assert.deepEqual(
    [...blockedByHeld(chain.slice(0, 3), new Set([1, 3]))],
    [[3, [2]]],
    "only the included actions downstream of a held one are named",
  );
});

test("the batch's digests are exactly the included actions', keyed by id", () => {
  assert.deepEqual(digestsOf(all, new Set([2, 5])), { "2": "d2", "5": "d5" });
});

test("the query names one execution, a turn's executions by prefix, listed ids, or everything", () => {
  const turn = selectionOf(new URLSearchParams("turn=t1"));
  assert.ok(inSelection(turn, 1, "t1.1.0"));
  assert.ok(!inSelection(turn, 1, "t10.1.0"), "another turn sharing the first characters is not in it");
  assert.ok(inSelection(selectionOf(new URLSearchParams("execution=e1")), 1, "e1"));
  assert.ok(!inSelection(selectionOf(new URLSearchParams("execution=e1")), 1, "e2"));
  const ids = selectionOf(new URLSearchParams("ids=3,x,5"));
  assert.deepEqual(ids, { kind: "ids", ids: [3, 5] });
  assert.ok(inSelection(selectionOf(new URLSearchParams("")), 9, "any"));
  assert.equal(
    reviewPath("w 1", { kind: "execution", executionId: "t1.1" }),
    "/ws/w%201/review?execution=t1.1",
  );
});
