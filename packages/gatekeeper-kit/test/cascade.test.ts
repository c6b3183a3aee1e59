import assert from "node:assert/strict";
import { test } from "node:test";
import { cascadeFrom, dependencyClosure } from "../src/cascade.ts";

const nodes = [
  { id: "A", dependsOn: [] },
  { id: "B", dependsOn: ["A"] },
  { id: "C", dependsOn: [] },
  { id: "D", dependsOn: ["B", "C"] },
  { id: "E", dependsOn: ["C"] },
];

test("rejecting A cascades to everything built on it, transitively, in submission order", () => {
  assert.deepEqual(cascadeFrom(["A"], nodes), [
    { id: "B", cascadedFrom: "A", via: "A" },
    { id: "D", cascadedFrom: "A", via: "B" },
  ]);
});

test("independent actions are untouched and a leaf cascades to nothing", () => {
  assert.deepEqual(cascadeFrom(["E"], nodes), []);
  assert.deepEqual(
    cascadeFrom(["C"], nodes).map((c) => c.id),
    ["D", "E"],
  );
});

test("several roots: each dependent names the root reached through its first rejected dependency", () => {
  assert.deepEqual(
    cascadeFrom(["A", "C"], nodes).map((c) => [c.id, c.cascadedFrom]),
    [
      ["B", "A"],
      ["D", "A"],
      ["E", "C"],
    ],
  );
});

test("dependencies listed after their dependents and cycles still terminate", () => {
  const odd = [
    { id: 2, dependsOn: [1] },
    { id: 1, dependsOn: [0] },
    { id: 3, dependsOn: [4] },
    { id: 4, dependsOn: [3] },
  ];
  assert.deepEqual(
    cascadeFrom([0], odd).map((c) => c.id),
    [2, 1],
  );
  assert.deepEqual(cascadeFrom([3], odd), [{ id: 4, cascadedFrom: 3, via: 3 }]);
});

test("the dependency closure is what an approver must include, in submission order", () => {
  assert.deepEqual(dependencyClosure("D", nodes), ["A", "B", "C"]);
  assert.deepEqual(dependencyClosure("A", nodes), []);
  assert.deepEqual(dependencyClosure("unknown", nodes), []);
});
