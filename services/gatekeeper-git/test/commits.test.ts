import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { afterEach, beforeEach, test } from "node:test";
import { Delivery } from "@gatehouse/proto";
import { GIT_ACTION_KINDS } from "../src/action-kinds.ts";
import { type Harness, makeRepo, rejects, sh, startHarness, type TestRepo } from "./helpers.ts";

let repo: TestRepo;
let h: Harness;

beforeEach(async () => {
  repo = makeRepo({ "README.md": "one\ntwo\nthree\n", "docs/a.md": "a\n", "docs/b.md": "b\n" });
  h = await startHarness([repo.root]);
});
afterEach(async () => {
  await h.close();
  repo.cleanup();
});

const commitA = {
  branch: "main",
  message: "A: edit readme",
  changes: [{ path: "README.md", content: "one\nTWO\nthree\n" }],
};
const commitB = {
  branch: "main",
  message: "B: add c, drop b",
  changes: [
    { path: "docs/c.md", content: "c\n" },
    { path: "docs/b.md", delete: true },
  ],
};

test("commit A then B: provisional ids at once, reads show both in order, the repo has neither", async () => {
  const { repo: r } = h.open(repo.url);
  const tip = repo.subjects();
  const a = await r.commit(commitA);
  const b = await r.commit(commitB);
  assert.deepEqual(a, { id: "~1", branch: "main", pending: true });
  assert.equal(b.id, "~2");
  assert.equal(await r.readFile({ path: "README.md" }), "one\nTWO\nthree\n");
  assert.equal(await r.readFile({ path: "docs/c.md" }), "c\n");
  await rejects(r.readFile({ path: "docs/b.md" }), /deleted by a pending commit/);
  const files = (await r.listFiles()).files;
  assert.deepEqual(files, ["README.md", "docs/a.md", "docs/c.md"]);
  const log = (await r.log()).commits;
  assert.deepEqual(
    log.map((c) => [c.id.startsWith("~") ? c.id : "sha", c.message, c.pending]),
    [
      ["~2", "B: add c, drop b", true],
      ["~1", "A: edit readme", true],
      ["sha", "initial", false],
    ],
  );
  assert.deepEqual(repo.subjects(), tip, "the repository has neither commit");
  assert.equal(repo.show("main", "README.md"), "one\ntwo\nthree");

  const [sa, sb] = h.approval.submissions;
  assert.equal(sa!.localId, "~1");
  assert.deepEqual(sa!.description.dependsOn, []);
  assert.deepEqual(sb!.description.dependsOn, ["~1"], "B on the same branch depends on A");
  assert.equal(sa!.description.delivery, Delivery.DELIVERY_SIMULATE);
  assert.equal(sa!.description.descriptionIsComplete, true);
  assert.match(sa!.description.description, /-two\n\+TWO/);
  assert.match(sa!.description.description, /--- a\/README.md\n\+\+\+ b\/README.md/);
  assert.match(sb!.description.description, /--- \/dev\/null\n\+\+\+ b\/docs\/c.md/);
  assert.match(sb!.description.description, /--- a\/docs\/b.md\n\+\+\+ \/dev\/null/);
  const payload = JSON.parse(sa!.payloadJson);
  assert.deepEqual(Object.keys(payload).sort(), ["base", "branch", "changes", "kind", "message", "parent"]);
  assert.equal(payload.parent, sh(repo.bare, "rev-parse", "main"));
});

test("ApplyAction of A then B writes both commits in order, exactly once each", async () => {
  const { repo: r } = h.open(repo.url);
  await r.commit(commitA);
  await r.commit(commitB);
  const ra = await h.apply(repo.url, "~1");
  assert.equal(ra.ok, true, ra.error);
  assert.deepEqual(repo.subjects(), ["A: edit readme", "initial"]);
  const again = await h.apply(repo.url, "~1");
  assert.deepEqual(again, ra, "a second ApplyAction of the same action returns the first outcome");
  assert.deepEqual(repo.subjects(), ["A: edit readme", "initial"], "and writes nothing");
  const rb = await h.apply(repo.url, "~2");
  assert.equal(rb.ok, true, rb.error);
  assert.deepEqual(repo.subjects(), ["B: add c, drop b", "A: edit readme", "initial"]);
  assert.equal(repo.show("main", "README.md"), "one\nTWO\nthree");
  assert.equal(repo.show("main", "docs/c.md"), "c");
  assert.throws(() => repo.show("main", "docs/b.md"));
  const shaB = JSON.parse(rb.resultJson).sha;
  const log = (await r.log()).commits;
  assert.equal(log[0]!.id, shaB, "applied commits leave the overlay; reads show the real ones");
  assert.ok(log.every((c) => !c.pending));
});

test("ActionRejected of A drops A and B (built on it) from reads", async () => {
  const { repo: r } = h.open(repo.url);
  await r.commit(commitA);
  await r.commit(commitB);
  await h.reject("~1");
  assert.equal(await r.readFile({ path: "README.md" }), "one\ntwo\nthree\n");
  assert.equal(await r.readFile({ path: "docs/b.md" }), "b\n");
  await rejects(r.readFile({ path: "docs/c.md" }), /is not a file/);
  assert.deepEqual(
    (await r.log()).commits.map((c) => c.message),
    ["initial"],
  );
  const next = await r.commit(commitA);
  assert.equal(next.id, "~3", "provisional ids are never reused");
});

test("a moved branch: a non-conflicting commit rebases; a conflicting one fails naming the paths", async () => {
  const { repo: r } = h.open(repo.url);
  await r.commit(commitA); // touches README.md
  await r.commit({ branch: "main", message: "C: edit a", changes: [{ path: "docs/a.md", content: "A!\n" }] }); // ~2
  repo.commitAndPush({ "docs/other.md": "someone else\n" }, "someone else: other");
  const ra = await h.apply(repo.url, "~1");
  assert.equal(ra.ok, true, ra.error);
  assert.equal(JSON.parse(ra.resultJson).rebased, true);
  assert.deepEqual(repo.subjects(), ["A: edit readme", "someone else: other", "initial"]);
  assert.equal(repo.show("main", "docs/other.md"), "someone else");
  repo.commitAndPush({ "docs/a.md": "conflict\n" }, "someone else: a");
  const rc = await h.apply(repo.url, "~2");
  assert.equal(rc.ok, false);
  assert.match(rc.error, /paths changed since the commit was made: docs\/a.md/);
  assert.equal(repo.show("main", "docs/a.md"), "conflict");
  assert.deepEqual(
    (await r.log()).commits.filter((c) => c.pending),
    [],
    "a failed commit leaves the overlay",
  );
});

test("a cut diff marks the description incomplete", async () => {
  const { repo: r } = h.open(repo.url);
  await r.commit({
    branch: "main",
    message: "big",
    changes: [{ path: "docs/big.md", content: "line\n".repeat(40_000) }],
  });
  const d = h.approval.submissions[0]!.description;
  assert.equal(d.descriptionIsComplete, false);
  assert.ok(Buffer.byteLength(d.description) < 80 * 1024);
});

test("concurrent commits are chained in call order", async () => {
  const { repo: r } = h.open(repo.url);
  const results = await Promise.all([
    r.commit({ branch: "main", message: "one", changes: [{ path: "docs/a.md", content: "1\n" }] }),
    r.commit({ branch: "main", message: "two", changes: [{ path: "docs/a.md", content: "2\n" }] }),
    r.commit({ branch: "main", message: "three", changes: [{ path: "docs/a.md", content: "3\n" }] }),
  ]);
  assert.deepEqual(
    results.map((x) => x.id),
    ["~1", "~2", "~3"],
  );
  assert.deepEqual(
    h.approval.submissions.map((s) => s.description.dependsOn),
    [[], ["~1"], ["~2"]],
  );
  assert.equal(await r.readFile({ path: "docs/a.md" }), "3\n");
  for (const id of ["~1", "~2", "~3"]) assert.equal((await h.apply(repo.url, id)).ok, true);
  assert.deepEqual(repo.subjects(), ["three", "two", "one", "initial"]);
  assert.equal(repo.show("main", "docs/a.md"), "3");
});

test("log pages carry pending commits first, then real history, each page observed", async () => {
  const small = makeRepo({ "x.txt": "0\n" });
  for (let i = 1; i <= 3; i++) small.commitAndPush({ "x.txt": `${i}\n` }, `real ${i}`);
  const h2 = await startHarness([small.root], { logPageSize: 2 });
  try {
    const { repo: r } = h2.open(small.url);
    await r.commit({ branch: "main", message: "pending 1", changes: [{ path: "x.txt", content: "p1\n" }] });
    await r.commit({ branch: "main", message: "pending 2", changes: [{ path: "x.txt", content: "p2\n" }] });
    await r.commit({ branch: "main", message: "pending 3", changes: [{ path: "x.txt", content: "p3\n" }] });
    const pages: string[][] = [];
    for (let page = 0; ; page++) {
      const p = await r.log({ page });
      pages.push(p.commits.map((c) => c.message));
      if (!p.more) break;
    }
    assert.deepEqual(pages, [
      ["pending 3", "pending 2"],
      ["pending 1", "real 3"],
      ["real 2", "real 1"],
      ["initial"],
    ]);
    assert.deepEqual(
      h2.approval.observations.filter((o) => o.kind === "git.log").map((o) => o.page),
      [0, 1, 2, 3],
    );
  } finally {
    await h2.close();
    small.cleanup();
  }
});

test("replacing a file over the read limit says the old content is not shown and marks the description incomplete", async () => {
  const big = makeRepo({ "huge.txt": "y".repeat(1024 * 1024 + 10) });
  const h2 = await startHarness([big.root]);
  try {
    const { repo: r } = h2.open(big.url);
    await r.commit({
      branch: "main",
      message: "shrink",
      changes: [{ path: "huge.txt", content: "small\n" }],
    });
    const d = h2.approval.submissions[0]!.description;
    assert.equal(d.descriptionIsComplete, false);
    assert.match(
      d.description,
      /previous content is binary or over 1048576 bytes and is not shown; the file is replaced entirely/,
    );
  } finally {
    await h2.close();
    big.cleanup();
  }
});

test("a parent directory that became a file on the branch is a conflict (no file is silently replaced)", async () => {
  const { repo: r } = h.open(repo.url);
  await r.commit({ branch: "main", message: "nest", changes: [{ path: "docs/new/x.md", content: "x\n" }] });
  repo.commitAndPush({ "docs/new": "now a file\n" }, "someone else: docs/new is a file");
  const res = await h.apply(repo.url, "~1");
  assert.equal(res.ok, false);
  assert.match(res.error, /paths changed since the commit was made: docs\/new\/x.md; nothing was committed/);
  assert.equal(repo.subjects()[0], "someone else: docs/new is a file");
  assert.equal(repo.show("main", "docs/new"), "now a file");
  await rejects(
    r.commit({ branch: "main", message: "x", changes: [{ path: "docs/a.md/x", content: "x" }] }),
    /docs\/a.md is a file, not a directory/,
  );
  await rejects(
    r.commit({
      branch: "main",
      message: "x",
      changes: [
        { path: "docs/z", content: "x" },
        { path: "docs/z/y", content: "y" },
      ],
    }),
    /writes both docs\/z and paths under it/,
  );
});

test("grep searches scoped text files with pending commits overlaid, each page observed", async () => {
  const { repo: r } = h.open(`${repo.url}#path=docs/`);
  await r.commit({
    branch: "main",
    message: "g",
    changes: [
      { path: "docs/a.md", content: "nothing here\n" },
      { path: "docs/n.md", content: "x\nneedle b\n" },
    ],
  });
  repo.commitAndPush({ "docs/b.md": "needle a\n", "README.md": "needle outside scope\n" }, "needles");
  const res = await r.grep({ pattern: "needle" });
  assert.deepEqual(res.matches, [
    { path: "docs/b.md", line: 1, text: "needle a" },
    { path: "docs/n.md", line: 2, text: "needle b" },
  ]);
  const none = await r.grep({ pattern: "no such text" });
  assert.deepEqual(none.matches, []);
  assert.deepEqual(
    h.approval.observations.filter((o) => o.kind === "git.grep").map((o) => o.page),
    [0, 0],
  );
  await rejects(r.grep({ pattern: "" }), /grep.pattern must be/);
});

test("after a gatekeeper restart, pending commits are rebuilt from the approval service: reads show them, new ids never repeat", async () => {
  const first = h.open(repo.url).repo;
  await first.commit(commitA);
  await first.commit(commitB);
  assert.equal((await h.apply(repo.url, "~1")).ok, true);
  await h.restart();
  const { repo: r } = h.open(repo.url);
  assert.equal(await r.readFile({ path: "docs/c.md" }), "c\n", "B (still pending) is shown again");
  assert.equal(await r.readFile({ path: "README.md" }), "one\nTWO\nthree\n", "A is applied");
  const c = await r.commit({
    branch: "main",
    message: "C",
    changes: [{ path: "docs/c.md", content: "C\n" }],
  });
  assert.equal(c.id, "~3", "~1 and ~2 are used; the counter continues");
  const sc = h.approval.submissions.find((s) => s.localId === "~3")!;
  assert.deepEqual(sc.description.dependsOn, ["~2"], "C builds on the restored B");
  const blobOfC = createHash("sha1").update("blob 2\u0000c\n").digest("hex");
  assert.equal(JSON.parse(sc.payloadJson).base["docs/c.md"], blobOfC, "its base is B's content");
  assert.equal((await h.apply(repo.url, "~2")).ok, true);
  assert.equal((await h.apply(repo.url, "~3")).ok, true);
  assert.deepEqual(repo.subjects(), ["C", "B: add c, drop b", "A: edit readme", "initial"]);
});

test("createBranch from a pending commit applies after a restart: the commit's sha comes with the request", async () => {
  const { repo: r } = h.open(repo.url);
  await r.commit(commitA);
  await r.createBranch({ name: "topic", from: "main" });
  // Their kinds are among those ResolveResource publishes (so a rule's tag check knows them).
  const published = new Set(GIT_ACTION_KINDS.map((k) => k.tag));
  for (const s of h.approval.submissions.slice(-2))
    assert.ok(published.has(s.description.actionKind?.tag ?? ""));
  assert.equal((await h.apply(repo.url, "~1")).ok, true);
  await h.restart();
  const res = await h.apply(repo.url, "~2");
  assert.equal(res.ok, true, res.error);
  assert.deepEqual(repo.subjects("topic"), ["A: edit readme", "initial"]);
});

test("git's own refusals never become empty applied commits; modes and binary files are kept", async () => {
  const { repo: r } = h.open(repo.url);
  for (const path of ["GIT~1/config", ".GIT/config", ".git./x", "docs/.Git/y"]) {
    await rejects(
      r.commit({ branch: "main", message: "m", changes: [{ path, content: "x" }] }),
      /must not name \.git/,
    );
  }
  repo.commitAndPush({ "run.sh": "#!/bin/sh\necho 1\n" }, "script");
  sh(repo.work, "update-index", "--chmod=+x", "run.sh");
  sh(repo.work, "commit", "-q", "-m", "exec bit");
  sh(repo.work, "push", "-q", repo.bare, "main");
  await r.commit({
    branch: "main",
    message: "edit script",
    changes: [{ path: "run.sh", content: "#!/bin/sh\necho 2\n" }],
  });
  const applied = await h.apply(repo.url, "~1");
  assert.equal(applied.ok, true, applied.error);
  assert.match(sh(repo.bare, "ls-tree", "main", "run.sh"), /^100755 /, "the executable bit is kept");
});
