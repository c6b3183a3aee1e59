/**
 * Apply outcomes of writes to a remote repository, against a real git smart-HTTP server behind a
 * proxy that cuts or stalls the push (cutting-proxy.ts): a push the remote performed is never
 * recorded "failed" (the test checks the served bare repository, the remote's own record); a
 * remote that cannot be reached is "failed", nothing sent, naming the remote's origin and what to
 * check; a push that gets no answer before the caller's deadline is outcome unknown.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, test } from "node:test";
import { readApplyOutcome } from "@gatehouse/gatekeeper-kit";
import type { ApplyActionResponse, ApplyActionsProgress } from "@gatehouse/proto";
import { type ServiceError, status } from "@grpc/grpc-js";
import { type CuttingProxy, startCuttingProxy } from "./cutting-proxy.ts";
import { type GitHttpServer, startGitHttpServer } from "./git-http-server.ts";
import { type Harness, makeRepo, sh, startHarnessWithRemote, type TestRepo } from "./helpers.ts";

const TOKEN = "bot-token-never-shown";
let repo: TestRepo;
let server: GitHttpServer;
let proxy: CuttingProxy;
let h: Harness;
let url: string;

beforeEach(async () => {
  repo = makeRepo({ "README.md": "one\n" });
  server = await startGitHttpServer(repo.root, { bot: TOKEN });
  proxy = await startCuttingProxy(server.url);
  h = await startHarnessWithRemote(repo.root, proxy.url, TOKEN);
  url = `git+${proxy.url}repo.git`;
});
afterEach(async () => {
  await h.close();
  await proxy.close().catch(() => undefined);
  await server.close();
  repo.cleanup();
});

/** ApplyAction of a staged `localId`, with an optional deadline (ms from now). */
function apply(localId: string, deadlineMs?: number): Promise<ApplyActionResponse> {
  const sub = h.approval.submissions.find((s) => s.localId === localId);
  if (!sub) throw new Error(`no submission ${localId}`);
  return readApplyOutcome(
    h.client.applyAction(
      {
        workspaceId: "ws-1",
        binding: "REPO",
        url,
        trust: "byo",
        actionId: sub.actionId,
        localId,
        payloadJson: sub.payloadJson,
        dependencyResults: {},
      },
      deadlineMs === undefined ? {} : { deadline: Date.now() + deadlineMs },
    ),
  );
}

/** Stages one commit on main through the binding; returns its provisional id. */
async function stageCommit(): Promise<string> {
  const { repo: r } = h.open(url);
  const res = await r.commit({
    branch: "main",
    message: "agent: edit README",
    changes: [{ path: "README.md", content: "two\n" }],
  });
  return res.id;
}

/** The error of an apply that did not end with an outcome. */
async function lostWith(p: Promise<unknown>): Promise<ServiceError> {
  try {
    const res = await p;
    assert.fail(`expected no outcome, got ${JSON.stringify(res)}`);
  } catch (e) {
    if ((e as ServiceError).code === undefined) throw e;
    return e as ServiceError;
  }
}

test("a push the remote performed, connection cut before its answer: the branch is read and the write recorded applied, never failed", async () => {
  const id = await stageCommit();
  const before = sh(repo.bare, "rev-parse", "main");
  proxy.pushMode = "cut-after-answer";
  const res = await apply(id);
  // curl resends a request whose connection died unanswered; the remote refuses the resend.
  assert.ok(proxy.cutAfterAnswer >= 1, "the remote answered the push and the answer was cut");
  const now = sh(repo.bare, "rev-parse", "main");
  assert.notEqual(now, before, "the remote's own record: the push happened");
  assert.equal(res.ok, true, res.error);
  assert.equal((JSON.parse(res.resultJson) as { sha: string }).sha, now);
});

test("a push the remote performed whose answer is cut once: curl's resend is refused by the remote, and the write is still recorded applied", async () => {
  const id = await stageCommit();
  proxy.pushMode = "cut-first-answer";
  const res = await apply(id);
  assert.equal(proxy.cutAfterAnswer, 1);
  assert.equal(res.ok, true, res.error);
  assert.equal((JSON.parse(res.resultJson) as { sha: string }).sha, sh(repo.bare, "rev-parse", "main"));
  assert.deepEqual(repo.subjects(), ["agent: edit README", "initial"], "written once");
});

test("a push the remote performed, cut, and the remote gone right after: outcome unknown (UNAVAILABLE) naming the origin, never failed", async () => {
  const id = await stageCommit();
  const before = sh(repo.bare, "rev-parse", "main");
  proxy.pushMode = "cut-after-answer";
  const cut = setInterval(() => {
    if (proxy.cutAfterAnswer > 0) proxy.down = true; // the branch read after the cut fails
  }, 1);
  try {
    const err = await lostWith(apply(id));
    assert.equal(err.code, status.UNAVAILABLE, err.details);
    assert.match(err.details, /outcome is unknown/);
    assert.ok(err.details.includes(proxy.url.replace(/\/$/, "")), err.details);
    assert.ok(!err.details.includes(TOKEN) && !err.details.includes("repo.git"), err.details);
  } finally {
    clearInterval(cut);
  }
  assert.notEqual(
    sh(repo.bare, "rev-parse", "main"),
    before,
    "it did happen: recording it failed would be wrong",
  );
});

test("a remote that is down (closed port): failed, not sent, naming the origin, the cause and what to check", async () => {
  const id = await stageCommit();
  const before = sh(repo.bare, "rev-parse", "main");
  const origin = proxy.url.replace(/\/$/, "");
  await proxy.close();
  const res = await apply(id);
  assert.equal(res.ok, false);
  assert.match(res.error, /was not sent: connection refused/);
  assert.match(res.error, /check that the server is running/);
  assert.match(res.error, /nothing was written/);
  assert.ok(res.error.includes(origin), res.error);
  assert.ok(!res.error.includes(TOKEN) && !res.error.includes("repo.git"), res.error);
  assert.equal(sh(repo.bare, "rev-parse", "main"), before);
});

test("a remote that accepts the push and never answers: with a short deadline the apply ends as outcome unknown before it", async () => {
  const id = await stageCommit();
  proxy.pushMode = "stall";
  const started = Date.now();
  const err = await lostWith(apply(id, 5000));
  assert.equal(proxy.stalled, 1, "the pack request reached the remote");
  assert.equal(err.code, status.UNAVAILABLE, err.details);
  assert.match(err.details, /no answer came in time.*outcome is unknown/);
  assert.ok(Date.now() - started < 5000, "ended before the caller stopped waiting");
});

test("a hook that declines the push: failed with the remote's reason, nothing written", async () => {
  const id = await stageCommit();
  const before = sh(repo.bare, "rev-parse", "main");
  writeFileSync(
    join(repo.bare, "hooks", "pre-receive"),
    "#!/bin/sh\necho 'frozen for release' >&2\nexit 1\n",
    {
      mode: 0o755,
    },
  );
  const res = await apply(id);
  assert.equal(res.ok, false);
  assert.match(res.error, /frozen for release.*the remote refused it, nothing was written/);
  assert.equal(sh(repo.bare, "rev-parse", "main"), before);
});

/** A local binding whose origin is `up.git` behind the proxy; stages a commit and its push. */
async function stagePush(): Promise<{ up: string; pushId: string }> {
  const up = join(repo.root, "up.git");
  sh(repo.root, "clone", "-q", "--bare", repo.bare, up);
  sh(repo.bare, "remote", "set-url", "origin", `${proxy.url}up.git`);
  const { repo: r } = h.open(repo.url);
  await r.commit({ branch: "main", message: "A", changes: [{ path: "README.md", content: "A\n" }] });
  const pushId = (await r.push({ branch: "main" })).id;
  assert.equal((await h.apply(repo.url, "~1")).ok, true, "the local commit");
  return { up, pushId };
}

test("push action: the remote performed it and the answer was cut: applied (the remote's branch is read)", async () => {
  const { up, pushId } = await stagePush();
  proxy.pushMode = "cut-after-answer";
  const res = await h.apply(repo.url, pushId);
  assert.ok(proxy.cutAfterAnswer >= 1);
  assert.equal(res.ok, true, res.error);
  assert.equal(sh(up, "rev-parse", "main"), sh(repo.bare, "rev-parse", "main"), "the remote's own record");
});

test("push action to a remote that is down: failed, not sent, naming the origin", async () => {
  const { up, pushId } = await stagePush();
  const before = sh(up, "rev-parse", "main");
  const origin = proxy.url.replace(/\/$/, "");
  await proxy.close();
  const res = await h.apply(repo.url, pushId);
  assert.equal(res.ok, false);
  assert.match(res.error, /was not sent: connection refused.*nothing was written/);
  assert.ok(res.error.includes(origin) && !res.error.includes("up.git"), res.error);
  assert.equal(sh(up, "rev-parse", "main"), before);
});

test("a run of commits (one push) performed, cut, and the remote gone right after: every action announced, none answered, the stream ends UNAVAILABLE", async () => {
  const { repo: r } = h.open(url);
  const ids = [
    (await r.commit({ branch: "main", message: "C1", changes: [{ path: "README.md", content: "1\n" }] })).id,
    (await r.commit({ branch: "main", message: "C2", changes: [{ path: "README.md", content: "2\n" }] })).id,
  ];
  const subs = ids.map((l) => h.approval.submissions.find((s) => s.localId === l)!);
  proxy.pushMode = "cut-after-answer";
  const cut = setInterval(() => {
    if (proxy.cutAfterAnswer > 0) proxy.down = true;
  }, 1);
  const running = new Set<number>();
  let outcomes = 0;
  const err = await new Promise<ServiceError>((resolve, reject) => {
    const call = h.client.applyActions({
      workspaceId: "ws-1",
      binding: "REPO",
      url,
      trust: "byo",
      actions: subs.map((s) => ({
        actionId: s.actionId,
        localId: s.localId,
        payloadJson: s.payloadJson,
        dependencyResults: {},
      })),
    });
    call.on("data", (m: ApplyActionsProgress) => {
      if (m.event?.$case === "running") running.add(m.actionId);
      else outcomes++;
    });
    call.on("error", resolve);
    call.on("end", () => reject(new Error("the stream ended without an error")));
  }).finally(() => clearInterval(cut));
  assert.equal(err.code, status.UNAVAILABLE, err.details);
  assert.match(err.details, /outcome is unknown/);
  assert.deepEqual(
    [...running],
    subs.map((s) => s.actionId),
    "both were in flight (the worker records both unknown)",
  );
  assert.equal(outcomes, 0);
  assert.deepEqual(repo.subjects().slice(0, 2), ["C2", "C1"], "the remote's own record: both were written");
});
