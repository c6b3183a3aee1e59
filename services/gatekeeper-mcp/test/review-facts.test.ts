import assert from "node:assert/strict";
import { test } from "node:test";
import { reviewFacts } from "../src/review-facts.ts";

test("write_file summary names the path and line count, preview holds the first 3 lines", () => {
  const f = reviewFacts("write_file", { path: "docs/ledger.md", content: "a\nb\nc\nd\n" });
  assert.equal(f.summary, "write_file docs/ledger.md (5 lines)");
  assert.deepEqual(f.fields, [
    { name: "path", value: "docs/ledger.md" },
    { name: "content", value: "(5 lines)" },
  ]);
  assert.equal(f.preview, "a\nb\nc");
  assert.deepEqual(f.risks, []);
});

test("delete_entities is destructive; create_entities/create_relations summarise names", () => {
  const d = reviewFacts("delete_entities", { entityNames: ["Old Contractor"] });
  assert.equal(d.risks[0]?.kind, "destructive");
  assert.equal(d.summary, "delete_entities Old Contractor");
  const e = reviewFacts("create_entities", {
    entities: ["Alice", "Bob", "C", "D", "E"].map((name) => ({ name })),
  });
  assert.equal(e.summary, "create_entities Alice, Bob (+3)");
  const r = reviewFacts("create_relations", {
    relations: [{ from: "Alice", relationType: "works_at", to: "Acme" }],
  });
  assert.equal(r.summary, "create_relations Alice works_at Acme");
});

test("a DROP TABLE in a string argument is a content risk naming the argument", () => {
  const f = reviewFacts("write_file", { path: "a.md", content: "x\n\n\n\n\n\nDROP TABLE customers;\n" });
  assert.ok(
    f.risks.some((r) => r.kind === "content" && r.reason.includes("content")),
    JSON.stringify(f.risks),
  );
});
