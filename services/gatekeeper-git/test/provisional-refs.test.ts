/**
 * A provisional commit id ("~N", what a commit returns) is a ref wherever a ref is taken: while
 * pending it names the simulated commit (its branch as of that write), once applied the real
 * commit it became; an id that names no revision is refused naming the id and its state.
 */
import assert from "node:assert/strict";
import { afterEach, beforeEach, test } from "node:test";
import { type Harness, makeRepo, rejects, sh, startHarness, type TestRepo } from "./helpers.ts";

let repo: TestRepo;
let h: Harness;

beforeEach(async () => {
  repo = makeRepo({ "README.md": "one\n", "docs/a.md": "a\n" });
  h = await startHarness([repo.root]);
});
afterEach(async () => {
  await h.close();
  repo.cleanup();
});

const commitA = {
  branch: "main",
  message: "A: add b",
  changes: [{ path: "docs/b.md", content: "b from A\n" }],
};
const commitB = {
  branch: "main",
  message: "B: edit b, add c",
  changes: [
    { path: "docs/b.md", content: "b from B\n" },
    { path: "docs/c.md", content: "c\n" },
  ],
};

test("while pending, ~N is a ref for readFile, readFilePage, listFiles, log, grep and diff: the branch as of that commit", async () => {
  const { repo: r } = h.open(repo.url);
  assert.equal((await r.commit(commitA)).id, "~1");
  assert.equal((await r.commit(commitB)).id, "~2");
  assert.equal(await r.readFile({ path: "docs/b.md", ref: "~1" }), "b from A\n");
  assert.equal(await r.readFile({ path: "docs/b.md", ref: "~2" }), "b from B\n");
  assert.equal((await r.readFilePage({ path: "docs/b.md", ref: "~1" })).content, "b from A\n");
  assert.deepEqual((await r.listFiles({ ref: "~1" })).files, ["README.md", "docs/a.md", "docs/b.md"]);
  assert.deepEqual((await r.listFiles({ ref: "~2" })).files, [
    "README.md",
    "docs/a.md",
    "docs/b.md",
    "docs/c.md",
  ]);
  assert.deepEqual(
    (await r.log({ ref: "~1" })).commits.map((c) => [c.id, c.pending]),
    [
      ["~1", true],
      [sh(repo.bare, "rev-parse", "main"), false],
    ],
  );
  assert.deepEqual(
    (await r.grep({ pattern: "from", ref: "~1" })).matches.map((m) => [m.path, m.text]),
    [["docs/b.md", "b from A"]],
  );
  assert.deepEqual(
    (await r.diff({ from: "~1", to: "~2" })).files.map((f) => [f.path, f.status]),
    [
      ["docs/b.md", "modified"],
      ["docs/c.md", "added"],
    ],
  );
  const read = h.approval.observations.find((o) => o.kind === "git.readFile");
  assert.match(read!.description, /at ~1 \(pending on main\)/, "the observation names the revision read");
});

test("createBranch from ~N starts at that commit: later pending commits on the source branch are not inherited", async () => {
  const { repo: r } = h.open(repo.url);
  await r.commit(commitA);
  await r.commit(commitB);
  const topic = await r.createBranch({ name: "topic", from: "~1" });
  assert.deepEqual(topic, { id: "~3", branch: "topic", pending: true });
  const sub = h.approval.submissions.find((s) => s.localId === "~3")!;
  assert.deepEqual(sub.description.dependsOn, ["~1"]);
  assert.match(sub.description.description, /at pending commit ~1/);
  assert.equal(await r.readFile({ path: "docs/b.md", ref: "topic" }), "b from A\n");
  assert.deepEqual((await r.listFiles({ ref: "topic" })).files, ["README.md", "docs/a.md", "docs/b.md"]);
  assert.equal(
    await r.readFile({ path: "docs/b.md", ref: "~3" }),
    "b from A\n",
    "a createBranch id names its branch",
  );
  assert.equal((await h.apply(repo.url, "~1")).ok, true);
  const applied = await h.apply(repo.url, "~3");
  assert.equal(applied.ok, true, applied.error);
  assert.deepEqual(repo.subjects("topic"), ["A: add b", "initial"]);
  assert.equal(repo.show("topic", "docs/b.md"), "b from A");
  assert.equal(
    await r.readFile({ path: "docs/b.md", ref: "~3" }),
    "b from A\n",
    "an applied createBranch id names its branch",
  );
});

test("after apply, ~N names the real commit it became, for reads and createBranch", async () => {
  const { repo: r } = h.open(repo.url);
  await r.commit(commitA);
  await r.commit(commitB);
  const res = await h.apply(repo.url, "~1");
  assert.equal(res.ok, true, res.error);
  const sha = (JSON.parse(res.resultJson) as { sha: string }).sha;
  assert.equal(await r.readFile({ path: "docs/b.md", ref: "~1" }), "b from A\n");
  assert.deepEqual((await r.listFiles({ ref: "~1" })).files, ["README.md", "docs/a.md", "docs/b.md"]);
  assert.deepEqual(
    (await r.log({ ref: "~1" })).commits.map((c) => [c.id, c.message.trim()]),
    [
      [sha, "A: add b"],
      [sh(repo.bare, "rev-parse", "main~1"), "initial"],
    ],
  );
  const read = h.approval.observations.filter((o) => o.kind === "git.readFile").pop();
  assert.match(read!.description, new RegExp(`at ~1 \\(applied as ${sha}\\)`));
  await r.createBranch({ name: "from-applied", from: "~1" });
  assert.equal(await r.readFile({ path: "docs/b.md", ref: "from-applied" }), "b from A\n");
  const made = await h.apply(repo.url, "~3");
  assert.equal(made.ok, true, made.error);
  assert.equal(sh(repo.bare, "rev-parse", "from-applied"), sha);
});

test("after a restart, an applied ~N still names the real commit it became (from the approval service, not memory): diff, log, readFile, listFiles, createBranch", async () => {
  const { repo: r } = h.open(repo.url);
  await r.commit(commitA);
  await r.commit(commitB);
  await r.createBranch({ name: "early", from: "~1" });
  const res = await h.apply(repo.url, "~1");
  assert.equal(res.ok, true, res.error);
  const sha = (JSON.parse(res.resultJson) as { sha: string }).sha;
  assert.equal((await h.apply(repo.url, "~3")).ok, true, "the createBranch ~3 applied");
  await h.restart();
  const { repo: after } = h.open(repo.url);
  assert.equal(await after.readFile({ path: "docs/b.md", ref: "~1" }), "b from A\n");
  assert.deepEqual((await after.listFiles({ ref: "~1" })).files, ["README.md", "docs/a.md", "docs/b.md"]);
  assert.deepEqual(
    (await after.log({ ref: "~1" })).commits.map((c) => [c.id, c.message.trim()]),
    [
      [sha, "A: add b"],
      [sh(repo.bare, "rev-parse", "main~1"), "initial"],
    ],
  );
  const read = h.approval.observations.filter((o) => o.kind === "git.readFile").pop();
  assert.match(read!.description, new RegExp(`at ~1 \\(applied as ${sha}\\)`));
  assert.deepEqual(
    (await after.diff({ from: "~1", to: "~2" })).files.map((f) => [f.path, f.status]),
    [
      ["docs/b.md", "modified"],
      ["docs/c.md", "added"],
    ],
    "the applied ~1 against the still pending ~2 (rebuilt on it)",
  );
  assert.equal(
    await after.readFile({ path: "docs/b.md", ref: "~3" }),
    "b from A\n",
    "an applied createBranch id still names its branch",
  );
  const made = await after.createBranch({ name: "from-applied", from: "~1" });
  assert.equal(made.id, "~4", "ids handed out before the restart are not reused");
  const applied = await h.apply(repo.url, "~4");
  assert.equal(applied.ok, true, applied.error);
  assert.equal(sh(repo.bare, "rev-parse", "from-applied"), sha, "the branch starts at the real commit");
});

test("after a restart, a ~N that was rejected names no revision, and the refusal says why", async () => {
  const { repo: r } = h.open(repo.url);
  await r.commit(commitA);
  await h.reject("~1");
  await h.restart();
  const { repo: after } = h.open(repo.url);
  await rejects(
    after.readFile({ path: "README.md", ref: "~1" }),
    /ref ~1 is no longer pending and was not applied as a commit \(rejected, failed or its outcome unknown/,
  );
  await rejects(after.log({ ref: "~9" }), /ref ~9 was never handed out by this binding/);
});

test("a ~N that names no revision is refused naming the id and its state, and records nothing", async () => {
  const { repo: r } = h.open(repo.url);
  await r.commit(commitA);
  await r.commit(commitB);
  await h.reject("~1");
  await rejects(r.readFile({ path: "README.md", ref: "~1" }), /ref ~1 was rejected, so it names no revision/);
  await rejects(
    r.listFiles({ ref: "~2" }),
    /ref ~2 was dropped because ~1, which it was built on, was rejected, so it names no revision/,
  );
  await rejects(r.log({ ref: "~7" }), /ref ~7 was never handed out by this binding/);
  await rejects(r.createBranch({ name: "x", from: "~7" }), /ref ~7 was never handed out by this binding/);
  await r.commit({ ...commitA, message: "A again" }); // ~3
  await h.apply(repo.url, "~3");
  const failing = await r.commit({
    branch: "main",
    message: "C",
    changes: [{ path: "docs/b.md", content: "C\n" }],
  });
  repo.commitAndPush({ "docs/b.md": "moved\n" }, "moved meanwhile");
  assert.equal((await h.apply(repo.url, failing.id)).ok, false);
  await rejects(
    r.readFile({ path: "README.md", ref: failing.id }),
    new RegExp(`ref ${failing.id} failed to apply`),
  );
  await rejects(r.readFile({ path: "README.md", ref: "~0" }), /ref ~0 was never handed out/);
  assert.deepEqual(
    h.approval.observations.map((o) => o.kind),
    [],
    "no refused read recorded an observation",
  );
});
