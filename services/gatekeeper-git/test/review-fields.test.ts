import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type Harness, makeRepo, startHarness, type TestRepo } from "./helpers.ts";

let repo: TestRepo;
let h: Harness;

before(async () => {
  repo = makeRepo({ "README.md": "one\ntwo\n", "docs/a.md": "a\n", "docs/b.md": "b\n" });
  h = await startHarness([repo.root]);
});
after(async () => {
  await h.close();
  repo.cleanup();
});

function last() {
  return h.approval.submissions[h.approval.submissions.length - 1]!.description;
}

test("a commit's review fields: summary with file count and subject, branch and paths, message preview, no risks for a plain edit", async () => {
  const { repo: r } = h.open(repo.url);
  await r.commit({
    branch: "main",
    message: "Fix typo\n\nThe second line\nthird\nfourth",
    changes: [
      { path: "README.md", content: "one\nTWO\n" },
      { path: "docs/a.md", content: "A\n" },
    ],
  });
  const d = last();
  assert.equal(d.summary, 'commit 2 files to main: "Fix typo"');
  assert.deepEqual(d.fields, [
    { name: "branch", value: "main" },
    { name: "paths", value: "README.md, docs/a.md" },
    { name: "message", value: "Fix typo" },
  ]);
  assert.equal(d.preview, "Fix typo\n\nThe second line");
  assert.deepEqual(d.risks, []);
  assert.deepEqual(d.preflightWarnings, []);
});

test("a commit that deletes a file and writes dangerous SQL is destructive and content-flagged", async () => {
  const { repo: r } = h.open(repo.url);
  await r.commit({
    branch: "main",
    message: "Clean\u200Bup",
    changes: [
      { path: "docs/b.md", delete: true },
      { path: "migrate.sql", content: "-- tidy\nDROP TABLE customers;\n" },
    ],
  });
  const d = last();
  assert.equal(
    d.summary,
    'commit 2 files to main: "Clean⟨U+200B⟩up"'.replace(
      "⟨U+200B⟩",
      d.summary.includes("⟨") ? "⟨U+200B⟩" : "\u200B",
    ),
  );
  const kinds = d.risks.map((x) => `${x.kind}: ${x.reason}`);
  assert.ok(kinds.includes("destructive: deletes file docs/b.md"), kinds.join("\n"));
  assert.ok(
    kinds.some((k) => /^content: commit message holds characters .*U\+200B/.test(k)),
    kinds.join("\n"),
  );
  assert.ok(
    kinds.some((k) => /^content: migrate\.sql line 2: `DROP TABLE customers` drops/.test(k)),
    kinds.join("\n"),
  );
  assert.ok(d.fields.some((f) => f.name === "deletes" && f.value === "docs/b.md"));
});

test("a commit that writes a file's current content warns before approval that the change is empty", async () => {
  const { repo: r } = h.open(repo.url);
  await r.commit({ branch: "main", message: "noop", changes: [{ path: "docs/a.md", content: "a\n" }] });
  assert.deepEqual(
    last().preflightWarnings,
    [],
    "docs/a.md differs in the agent's view (an earlier pending commit changed it)",
  );
  await r.commit({ branch: "main", message: "noop again", changes: [{ path: "docs/a.md", content: "a\n" }] });
  assert.deepEqual(last().preflightWarnings, [
    "docs/a.md already holds exactly this content: the change is empty",
  ]);
});

test("createBranch's review fields name the branch and where it starts", async () => {
  const { repo: r } = h.open(repo.url);
  await r.createBranch({ name: "feature/x", from: "main" });
  const d = last();
  assert.match(d.summary, /^create branch feature\/x from main \(pending ~\d+\)$/);
  assert.equal(d.fields[0]!.value, "feature/x");
  assert.deepEqual(d.risks, []);
});
