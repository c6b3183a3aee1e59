/**
 * ApplyActions on real git repositories: a run of commits on one branch is written with ONE ref
 * update (counted through gitTrace: update-ref for a local repository, push for a remote one), in
 * order, each outcome with its own commit's sha; a commit that conflicts mid-run leaves the ones
 * before it applied (still one update) and the ones after it unsent.
 */
import assert from "node:assert/strict";
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, test } from "node:test";
import type { ApplyActionResponse, ApplyActionsProgress, GatekeeperClient } from "@gatehouse/proto";
import { gitTrace } from "../src/git.ts";
import { type GitHttpServer, startGitHttpServer } from "./git-http-server.ts";
import {
  type Harness,
  makeRepo,
  sh,
  startHarness,
  startHarnessWithRemote,
  type TestRepo,
} from "./helpers.ts";

let repo: TestRepo;
let h: Harness;
let refUpdates: string[][] = [];

beforeEach(async () => {
  repo = makeRepo({ "README.md": "one\n", "docs/a.md": "a\n", "docs/b.md": "b\n" });
  h = await startHarness([repo.root]);
  refUpdates = [];
  gitTrace.listener = (args) => {
    if (["update-ref", "push", "ls-remote"].includes(args[0] ?? "")) refUpdates.push([...args]);
  };
});
afterEach(async () => {
  gitTrace.listener = null;
  await h.close();
  repo.cleanup();
});

/** What an ApplyActions stream said, in order, and how it ended. */
async function applyRun(
  client: GatekeeperClient,
  url: string,
  localIds: string[],
): Promise<{ events: string[]; outcomes: Map<string, ApplyActionResponse> }> {
  const subs = localIds.map((l) => {
    const s = h.approval.submissions.find((x) => x.localId === l);
    if (!s) throw new Error(`no submission ${l}`);
    return s;
  });
  const byId = new Map(subs.map((s) => [s.actionId, s.localId]));
  const call = client.applyActions({
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
  const events: string[] = [];
  const outcomes = new Map<string, ApplyActionResponse>();
  await new Promise<void>((resolve, reject) => {
    call.on("data", (m: ApplyActionsProgress) => {
      const l = byId.get(m.actionId) ?? `?${m.actionId}`;
      if (m.event?.$case === "running") {
        if (!events.includes(`running ${l}`)) events.push(`running ${l}`);
      } else if (m.event?.$case === "outcome") {
        events.push(`outcome ${l} ${m.event.outcome.ok}`);
        outcomes.set(l, m.event.outcome);
      }
    });
    call.on("error", reject);
    call.on("end", resolve);
  });
  return { events, outcomes };
}

const edit = (n: number, path: string) => ({
  branch: "main",
  message: `C${n}: edit ${path}`,
  changes: [{ path, content: `${path} ${n}\n` }],
});

test("a run of 6 commits on one branch: one update-ref, in order, each outcome with its own sha", async () => {
  const { repo: r } = h.open(repo.url);
  const ids: string[] = [];
  for (let n = 1; n <= 6; n++) ids.push((await r.commit(edit(n, n % 2 ? "README.md" : "docs/a.md"))).id);
  const before = sh(repo.bare, "rev-parse", "main");
  const { events, outcomes } = await applyRun(h.client, repo.url, ids);
  assert.deepEqual(
    refUpdates.map((a) => a[0]),
    ["update-ref"],
    "one ref update for the whole run",
  );
  assert.deepEqual(repo.subjects(), [
    "C6: edit docs/a.md",
    "C5: edit README.md",
    "C4: edit docs/a.md",
    "C3: edit README.md",
    "C2: edit docs/a.md",
    "C1: edit README.md",
    "initial",
  ]);
  for (const [k, id] of ids.entries()) {
    const res = outcomes.get(id);
    assert.equal(res?.ok, true, res?.error);
    const result = JSON.parse(res!.resultJson) as { sha: string; branch: string };
    assert.equal(
      result.sha,
      sh(repo.bare, "rev-parse", `main~${ids.length - 1 - k}`),
      `${id} has its own sha`,
    );
    assert.equal(result.branch, "main");
  }
  assert.equal(sh(repo.bare, "rev-parse", "main~6"), before, "built on the tip");
  assert.deepEqual(
    events.slice(0, 6),
    ids.map((l) => `running ${l}`),
    "running for each before any outcome",
  );
  assert.deepEqual(
    events.slice(6),
    ids.map((l) => `outcome ${l} true`),
  );
  assert.equal(repo.show("main", "README.md"), "README.md 5");
  const log = (await r.log()).commits;
  assert.ok(
    log.every((c) => !c.pending),
    "applied commits leave the overlay",
  );
});

test("a commit that conflicts mid-run: those before it applied with one update, it fails, the rest not sent", async () => {
  const { repo: r } = h.open(repo.url);
  const ids = [
    (await r.commit(edit(1, "README.md"))).id,
    (await r.commit(edit(2, "docs/b.md"))).id,
    (await r.commit(edit(3, "docs/a.md"))).id,
    (await r.commit(edit(4, "README.md"))).id,
  ];
  repo.commitAndPush({ "docs/a.md": "someone else\n" }, "someone else: a");
  refUpdates = [];
  const { events, outcomes } = await applyRun(h.client, repo.url, ids);
  assert.deepEqual(
    refUpdates.map((a) => a[0]),
    ["update-ref"],
  );
  assert.deepEqual(repo.subjects(), [
    "C2: edit docs/b.md",
    "C1: edit README.md",
    "someone else: a",
    "initial",
  ]);
  assert.equal(outcomes.get(ids[0]!)?.ok, true);
  assert.equal(JSON.parse(outcomes.get(ids[0]!)!.resultJson).rebased, true);
  assert.equal(outcomes.get(ids[1]!)?.ok, true);
  assert.match(outcomes.get(ids[2]!)?.error ?? "", /paths changed since the commit was made: docs\/a.md/);
  assert.equal(outcomes.has(ids[3]!), false, "the commit after the failure is not sent");
  assert.deepEqual(
    events.filter((e) => e.startsWith("outcome")),
    [`outcome ${ids[0]} true`, `outcome ${ids[1]} true`, `outcome ${ids[2]} false`],
  );
  assert.equal(events.includes(`running ${ids[3]}`), false, "nor announced");
});

/** Restarts the harness on `repo` served over smart HTTP; returns the binding's URL. */
async function overHttp(): Promise<{ url: string; server: GitHttpServer }> {
  const server = await startGitHttpServer(repo.root, { bot: "bot-token" });
  await h.close();
  h = await startHarnessWithRemote(repo.root, server.url, "bot-token");
  return { url: `git+${server.url}repo.git`, server };
}

/** Installs an executable hook in the served bare repository. */
function hook(name: string, script: string): void {
  writeFileSync(join(repo.bare, "hooks", name), `#!/bin/sh\n${script}\n`, { mode: 0o755 });
}

test("remote: a run of 4 commits is one push, with the gatekeeper's credentials", async () => {
  const { url, server } = await overHttp();
  try {
    const { repo: r } = h.open(url);
    const ids: string[] = [];
    for (let n = 1; n <= 4; n++) ids.push((await r.commit(edit(n, "docs/b.md"))).id);
    refUpdates = [];
    const { outcomes } = await applyRun(h.client, url, ids);
    assert.deepEqual(
      refUpdates.map((a) => a[0]),
      ["push", "update-ref"],
      "one push, then the mirror records the new tip",
    );
    assert.ok(ids.every((l) => outcomes.get(l)?.ok));
    assert.deepEqual(repo.subjects().slice(0, 5), [
      "C4: edit docs/b.md",
      "C3: edit docs/b.md",
      "C2: edit docs/b.md",
      "C1: edit docs/b.md",
      "initial",
    ]);
    assert.equal(JSON.parse(outcomes.get(ids[3]!)!.resultJson).sha, sh(repo.bare, "rev-parse", "main"));
  } finally {
    await server.close();
  }
});

test("remote: a push the remote refuses (branch certainly not moved) fails the first, the rest not sent", async () => {
  const { url, server } = await overHttp();
  try {
    const { repo: r } = h.open(url);
    const ids = [(await r.commit(edit(1, "docs/b.md"))).id, (await r.commit(edit(2, "docs/b.md"))).id];
    hook("pre-receive", "echo 'no pushes today' >&2; exit 1");
    const tip = sh(repo.bare, "rev-parse", "main");
    const { events, outcomes } = await applyRun(h.client, url, ids);
    assert.equal(sh(repo.bare, "rev-parse", "main"), tip, "the remote did not move");
    assert.equal(outcomes.get(ids[0]!)?.ok, false);
    assert.match(outcomes.get(ids[0]!)?.error ?? "", /git push failed .*nothing was written/);
    assert.equal(outcomes.has(ids[1]!), false, "not sent (the caller returns it or cascades it)");
    assert.ok(events.includes(`running ${ids[1]}`), "it was announced: the one push could have carried it");
  } finally {
    await server.close();
  }
});

test("remote: a push whose answer is lost after the remote moved is known applied (the branch is looked at)", async () => {
  const { url, server } = await overHttp();
  try {
    const { repo: r } = h.open(url);
    const ids = [(await r.commit(edit(1, "docs/b.md"))).id, (await r.commit(edit(2, "docs/b.md"))).id];
    // After the refs moved, the receiving end dies: the pusher gets no report.
    hook("post-receive", "kill -9 $PPID");
    refUpdates = [];
    const { outcomes } = await applyRun(h.client, url, ids);
    assert.deepEqual(
      refUpdates.map((a) => a[0]),
      ["push", "ls-remote"],
      "the push failed, then the remote's branch was read",
    );
    assert.deepEqual(repo.subjects().slice(0, 2), ["C2: edit docs/b.md", "C1: edit docs/b.md"]);
    assert.ok(
      ids.every((l) => outcomes.get(l)?.ok),
      outcomes.get(ids[0]!)?.error,
    );
    assert.equal(JSON.parse(outcomes.get(ids[1]!)!.resultJson).sha, sh(repo.bare, "rev-parse", "main"));
  } finally {
    await server.close();
  }
});
