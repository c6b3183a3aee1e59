/**
 * Remote repositories over real git smart HTTP (git http-backend behind basic auth on loopback):
 * commits are simulated until approved, then pushed in order; a push in between rebases or
 * conflicts; branches; diff; revert; observers (strategy B); local push to a remote.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, test } from "node:test";
import { readApplyOutcome } from "@gatehouse/gatekeeper-kit";
import type { ApplyActionResponse, PrepareRevertResponse } from "@gatehouse/proto";
import { createRemotes } from "../src/index.ts";
import { type GitHttpServer, startGitHttpServer } from "./git-http-server.ts";
import {
  type Harness,
  makeRepo,
  rejects,
  sh,
  startHarness,
  startHarnessWithRemote,
  type TestRepo,
} from "./helpers.ts";

let repo: TestRepo;
let server: GitHttpServer;
let h: Harness;
let url: string;

beforeEach(async () => {
  repo = makeRepo({ "README.md": "one\ntwo\nthree\n", "docs/a.md": "a\n" });
  server = await startGitHttpServer(repo.root, { bot: "bot-token", alice: "alice-token" });
  h = await startHarnessWithRemote(repo.root, server.url, "bot-token");
  url = `git+${server.url}repo.git`;
});
afterEach(async () => {
  await h.close();
  await server.close();
  repo.cleanup();
});

const commitA = {
  branch: "main",
  message: "A: edit readme",
  changes: [{ path: "README.md", content: "one\nTWO\nthree\n" }],
};
const commitB = { branch: "main", message: "B: add c", changes: [{ path: "docs/c.md", content: "c\n" }] };

function prepareRevert(localId: string, applied: ApplyActionResponse): Promise<PrepareRevertResponse> {
  const sub = h.approval.submissions.find((s) => s.localId === localId)!;
  return new Promise((ok, ko) =>
    h.client.prepareRevert(
      {
        workspaceId: "ws-1",
        binding: "REPO",
        url,
        trust: "byo",
        actionId: sub.actionId,
        localId,
        payloadJson: sub.payloadJson,
        resultJson: applied.resultJson,
      },
      (e, r) => (e ? ko(e) : ok(r)),
    ),
  );
}

test("remote: A then B are simulated, the remote has neither; applying pushes A then B with the gatekeeper's credentials", async () => {
  const { repo: r } = h.open(url);
  assert.equal((await r.commit(commitA)).id, "~1");
  assert.equal((await r.commit(commitB)).id, "~2");
  assert.equal(await r.readFile({ path: "README.md" }), "one\nTWO\nthree\n");
  assert.deepEqual((await r.listFiles()).files, ["README.md", "docs/a.md", "docs/c.md"]);
  assert.deepEqual(repo.subjects(), ["initial"], "the remote has neither commit");
  const [sa, sb] = h.approval.submissions;
  assert.equal(sa!.description.egress, true, "a commit on a remote is an egress write");
  assert.deepEqual(sb!.description.dependsOn, ["~1"]);
  assert.match(sa!.description.description, /and push it to http:\/\/127\.0\.0\.1:\d+\/repo\.git/);

  const ra = await h.apply(url, "~1");
  assert.equal(ra.ok, true, ra.error);
  assert.deepEqual(repo.subjects(), ["A: edit readme", "initial"]);
  const rb = await h.apply(url, "~2");
  assert.equal(rb.ok, true, rb.error);
  assert.deepEqual(repo.subjects(), ["B: add c", "A: edit readme", "initial"]);
  assert.equal(repo.show("main", "docs/c.md"), "c");
  assert.equal((JSON.parse(rb.resultJson) as { sha: string }).sha, sh(repo.bare, "rev-parse", "main"));
  assert.equal(server.requests.get("(anonymous)") ?? 0, 0, "every request carried the credential");
  assert.equal(server.requests.get("alice") ?? 0, 0);
  assert.ok((server.requests.get("bot") ?? 0) > 0);
  const log = (await r.log()).commits.map((c) => c.message);
  assert.deepEqual(
    log,
    ["B: add c", "A: edit readme", "initial"],
    "reads show the pushed history, nothing pending",
  );
});

test("remote: someone pushes in between; a non-conflicting commit rebases and applies, a conflicting one fails naming the path and drops its dependents", async () => {
  const { repo: r } = h.open(url);
  await r.commit(commitB);
  await r.commit(commitA);
  await r.commit({ branch: "main", message: "C: on A", changes: [{ path: "README.md", content: "x\n" }] });
  repo.commitAndPush({ "README.md": "someone else\n", "other.txt": "o\n" }, "someone else");
  const rb = await h.apply(url, "~1");
  assert.equal(rb.ok, true, rb.error);
  assert.equal((JSON.parse(rb.resultJson) as { rebased: boolean }).rebased, true);
  assert.deepEqual(repo.subjects(), ["B: add c", "someone else", "initial"]);
  const ra = await h.apply(url, "~2");
  assert.equal(ra.ok, false);
  assert.match(ra.error, /these paths changed since the commit was made: README\.md; nothing was committed/);
  assert.deepEqual(repo.subjects(), ["B: add c", "someone else", "initial"]);
  assert.equal(
    await r.readFile({ path: "README.md" }),
    "someone else\n",
    "A and C (built on A) are gone from reads",
  );
});

test("remote: createBranch from a pending commit, a commit on it, and both pushed in dependency order", async () => {
  const { repo: r } = h.open(url);
  await r.commit(commitA);
  const br = await r.createBranch({ name: "topic", from: "main" });
  assert.deepEqual(br, { id: "~2", branch: "topic", pending: true });
  await r.commit({
    branch: "topic",
    message: "T: on topic",
    changes: [{ path: "docs/t.md", content: "t\n" }],
  });
  assert.equal(
    await r.readFile({ path: "README.md", ref: "topic" }),
    "one\nTWO\nthree\n",
    "topic starts at ~1",
  );
  assert.equal(await r.readFile({ path: "docs/t.md", ref: "topic" }), "t\n");
  await rejects(r.readFile({ path: "docs/t.md" }), /not a file/);
  const deps = h.approval.submissions.map((s) => [s.localId, s.description.dependsOn]);
  assert.deepEqual(deps, [
    ["~1", []],
    ["~2", ["~1"]],
    ["~3", ["~2"]],
  ]);
  await rejects(r.createBranch({ name: "topic" }), /already exists \(or is pending\)/);
  await rejects(r.commit({ ...commitA, branch: "nope" }), /branch nope does not exist; create it first/);
  for (const id of ["~1", "~2", "~3"]) {
    const res = await h.apply(url, id);
    assert.equal(res.ok, true, `${id}: ${res.error}`);
  }
  assert.deepEqual(repo.subjects("topic"), ["T: on topic", "A: edit readme", "initial"]);
  assert.deepEqual(repo.subjects("main"), ["A: edit readme", "initial"]);
});

test("diff between revisions, pending ones included, paged and observed", async () => {
  const { repo: r } = h.open(url);
  await r.commit(commitA);
  await r.commit({
    branch: "main",
    message: "B",
    changes: [
      { path: "docs/a.md", delete: true },
      { path: "docs/c.md", content: "c\n" },
    ],
  });
  const d = await r.diff({ from: "main" });
  assert.deepEqual(
    d.files.map((f) => [f.path, f.status]),
    [
      ["README.md", "modified"],
      ["docs/a.md", "deleted"],
      ["docs/c.md", "added"],
    ],
  );
  assert.match(d.files[0]!.patch, /-two\n\+TWO/);
  const onlyB = await r.diff({ from: "~1", to: "~2" });
  assert.deepEqual(
    onlyB.files.map((f) => f.path),
    ["docs/a.md", "docs/c.md"],
  );
  const real = repo.commitAndPush({ "docs/a.md": "A\n" }, "real");
  const byShas = await r.diff({ from: sh(repo.bare, "rev-parse", "main~1"), to: real });
  assert.deepEqual(
    byShas.files.map((f) => [f.path, f.status]),
    [["docs/a.md", "modified"]],
  );
  await rejects(r.diff({ from: "~9" }), /diff\.from: ref ~9 was never handed out by this binding/);
  await rejects(r.diff({}), /diff\.from is required/);
  assert.deepEqual(
    h.approval.observations.filter((o) => o.kind === "git.diff").map((o) => o.page),
    [0, 0, 0],
    "each diff page observed; refused ones recorded nothing",
  );
});

test("revert: an applied commit is reverted by a new commit action; createBranch cannot be reverted", async () => {
  const { repo: r } = h.open(url);
  await r.commit({
    branch: "main",
    message: "A",
    changes: [
      { path: "README.md", content: "new\n" },
      { path: "docs/n.md", content: "n\n" },
    ],
  });
  const applied = await h.apply(url, "~1");
  assert.equal(applied.ok, true, applied.error);
  const rev = await prepareRevert("~1", applied);
  const sha = (JSON.parse(applied.resultJson) as { sha: string }).sha;
  assert.equal(rev.localId, "~2");
  assert.equal(rev.description?.implementsRevert, h.approval.submissions[0]!.actionId);
  assert.equal(rev.description?.actionKind?.tag, "git.revert");
  assert.match(rev.description!.description, new RegExp(`Revert commit ${sha}`));
  assert.match(rev.description!.description, /-new\n\+one/);
  assert.deepEqual(repo.subjects(), ["A", "initial"], "preparing a revert writes nothing");
  // Apply it as the approval service would after a person approves.
  const res = await readApplyOutcome(
    h.client.applyAction({
      workspaceId: "ws-1",
      binding: "REPO",
      url,
      trust: "byo",
      actionId: 99,
      localId: rev.localId,
      payloadJson: rev.payloadJson,
      dependencyResults: {},
    }),
  );
  assert.equal(res.ok, true, res.error);
  assert.deepEqual(repo.subjects(), ['Revert "A"', "A", "initial"]);
  assert.equal(repo.show("main", "README.md"), "one\ntwo\nthree");
  assert.equal(sh(repo.bare, "ls-tree", "--name-only", "main", "docs/"), "docs/a.md");

  await r.createBranch({ name: "b2" });
  const created = await h.apply(url, "~3");
  assert.equal(created.ok, true, created.error);
  await assert.rejects(prepareRevert("~3", created), /only commits can be reverted/);
});

test("observers, strategy B: allowed only when the person's own credential reads the repository", async () => {
  const check = (u: string, credential: string) =>
    new Promise<{ allowed: boolean; reason: string }>((ok, ko) =>
      h.client.checkObserver(
        { url: u, observer: "user:alice", credential, workspaceId: "ws-1", binding: "REPO" },
        (e, x) => (e ? ko(e) : ok(x)),
      ),
    );
  const yes = await check(url, "alice:alice-token");
  assert.equal(yes.allowed, true, yes.reason);
  assert.match(yes.reason, /^B: /);
  const wrong = await check(url, "alice:not-her-token");
  assert.equal(wrong.allowed, false);
  assert.doesNotMatch(wrong.reason, /not-her-token/);
  assert.equal((await check(url, "no-colon")).allowed, false);
  const local = await check(repo.url, "alice:alice-token");
  assert.equal(local.allowed, false);
  assert.match(local.reason, /local repository/);
});

test("a wrong gatekeeper credential: opening the binding fails clearly and the token never appears", async () => {
  writeFileSync(join(repo.root, "bad"), "wrong-token\n");
  const bad = await startHarness([repo.root], undefined, {
    remotes: createRemotes({
      remotes: [{ url: server.url, username: "bot", tokenFile: join(repo.root, "bad") }],
    }),
    cacheDir: join(repo.root, "cache-bad"),
  });
  try {
    await assert.rejects(
      new Promise((ok, ko) => bad.client.resolveResource({ url, name: "" }, (e, x) => (e ? ko(e) : ok(x)))),
      (e: Error) => {
        assert.match(e.message, /could not be fetched with the gatekeeper's credentials/);
        assert.doesNotMatch(e.message, /wrong-token|Authorization/);
        return true;
      },
    );
  } finally {
    await bad.close();
  }
});

test("push: a local repository's branch goes to its allowed remote after approval, fast-forward only", async () => {
  sh(repo.root, "clone", "-q", "--bare", repo.bare, join(repo.root, "up.git"));
  sh(repo.bare, "remote", "set-url", "origin", `${server.url}up.git`);
  sh(repo.bare, "remote", "add", "elsewhere", "https://example.com/x.git");
  const { repo: r } = h.open(repo.url);
  await r.commit(commitA);
  const p = await r.push({ branch: "main" });
  assert.equal(p.id, "~2");
  const sub = h.approval.submissions[1]!;
  assert.equal(sub.description.egress, true);
  assert.deepEqual(sub.description.dependsOn, ["~1"]);
  assert.equal(sub.description.actionKind?.tag, "git.push");
  assert.match(sub.description.description, /~1 \(pending\): A: edit readme/);
  assert.equal(sub.description.summary, "push main to origin");
  assert.deepEqual(
    sub.description.risks.map((x) => x.kind),
    ["egress"],
  );
  assert.match(sub.description.risks[0]!.reason, /to remote origin \(http/);
  assert.match(sub.description.preview, /^~1 \(pending\): A: edit readme\n/);
  await rejects(r.push({ branch: "main", remote: "elsewhere" }), /no administrator allowed/);
  await rejects(r.push({ branch: "main", remote: "nope" }), /no remote named nope/);
  const upSubjects = () => sh(join(repo.root, "up.git"), "log", "--format=%s", "main").split("\n");
  assert.deepEqual(upSubjects(), ["initial"]);
  assert.equal((await h.apply(repo.url, "~1")).ok, true);
  assert.deepEqual(upSubjects(), ["initial"], "the commit is local until the push is approved");
  const pushed = await h.apply(repo.url, "~2");
  assert.equal(pushed.ok, true, pushed.error);
  assert.deepEqual(upSubjects(), ["A: edit readme", "initial"]);

  const remoteH = h.open(url).repo;
  await rejects(remoteH.push({ branch: "main" }), /push is for local \(git\+file\) repositories/);
});

test("ResolveResource with check_only parses an allowed remote URL without fetching it; a full resolve fetches", async () => {
  const total = () => [...server.requests.values()].reduce((a, b) => a + b, 0);
  const resolve = (req: { url: string; name: string; checkOnly?: boolean }) =>
    new Promise<{ binding: string; url: string; dts: string }>((ok, ko) =>
      h.client.resolveResource(req, (e, x) => (e ? ko(e) : ok(x))),
    );
  const before = total();
  const checked = await resolve({ url: `${url}#branch=main`, name: "", checkOnly: true });
  assert.deepEqual([checked.binding, checked.url, checked.dts], ["REPO", `${url}#branch=main`, ""]);
  await assert.rejects(resolve({ url: "git+https://elsewhere.example/x.git", name: "", checkOnly: true }));
  assert.equal(total(), before, "nothing reached the remote");
  await resolve({ url, name: "" });
  assert.ok(total() > before, "a full resolve fetches (the counter works)");
});
