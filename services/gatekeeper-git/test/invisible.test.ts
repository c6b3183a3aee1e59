import assert from "node:assert/strict";
import { afterEach, beforeEach, test } from "node:test";
import { type Harness, makeRepo, startHarness, type TestRepo } from "./helpers.ts";

let repo: TestRepo;
let h: Harness;

beforeEach(async () => {
  repo = makeRepo({ "README.md": "one\n" });
  h = await startHarness([repo.root]);
});
afterEach(async () => {
  await h.close();
  repo.cleanup();
});

test("a commit whose path holds U+202E and message a zero-width space: the description names both, and the commit applies with the exact bytes", async () => {
  const path = "docs/invoice\u202Etxt.exe";
  const { repo: r } = h.open(repo.url);
  await r.commit({ branch: "main", message: "add\u200B invoice", changes: [{ path, content: "x\n" }] });
  const d = h.approval.submissions[0]!.description.description;
  const trusted = d.slice(0, d.indexOf("```"));
  assert.ok(trusted.includes("**⚠ Hidden characters:"), trusted);
  assert.ok(
    trusted.includes(
      "- ⚠ Commit message contains invisible or direction-control characters: U+200B ZERO WIDTH SPACE",
    ),
    trusted,
  );
  assert.ok(
    trusted.includes(
      "- ⚠ Diff contains invisible or direction-control characters: U+202E RIGHT-TO-LEFT OVERRIDE",
    ),
    trusted,
  );
  assert.ok(d.includes(`+++ b/${path}`), "the fenced diff keeps the exact path");

  const applied = await h.apply(repo.url, "~1");
  assert.equal(applied.ok, true, applied.error);
  assert.equal(repo.show("main", path), "x");
  assert.equal(repo.subjects()[0], "add\u200B invoice");
});
