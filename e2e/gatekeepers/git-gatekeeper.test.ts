/**
 * The git gatekeeper across the real services (kernel routing, the approval service, the lifecycle
 * worker on a real Temporal dev server) on a real repository made with the git CLI: commits are
 * simulated until a person approves them, in dependency order.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { ActionStatus } from "@gatehouse/proto";
import type { ServiceError } from "@grpc/grpc-js";
import { git, makeBareRepo } from "../support/git-repo.ts";
import { type Harness, returned, startHarness, unary } from "../support/harness.ts";

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h.close();
});

/** A bare repository under the dev stack's allowed root, with one commit on main. */
function makeRepo(name: string): string {
  return makeBareRepo(h.dir, join(h.dir, "repos", `${name}.git`), { "docs/readme.md": "hello\n" });
}

const twoCommits = `export default async (env: any) => {
  await env.REPO.commit({ branch: "main", message: "A", changes: [{ path: "docs/a.md", content: "a\\n" }] });
  await env.REPO.commit({ branch: "main", message: "B", changes: [{ path: "docs/b.md", content: "b\\n" }] });
  return (await env.REPO.listFiles({})).files ?? (await env.REPO.listFiles({}));
}`;

async function pending(ws: string) {
  const res = await unary(h.decisions, h.decisions.listActions, { workspaceId: ws, pendingOnly: true });
  return res.actions.map((a) => a.id);
}

test("commits are simulated, approving B before A is refused unless A is included, and both land in order", async () => {
  const bare = makeRepo("ordered");
  const ws = await h.workspace(`git+file://${bare}`);
  const listing = JSON.stringify(returned(await h.exec(ws, twoCommits)));
  assert.match(listing, /docs\/a\.md/);
  assert.match(listing, /docs\/b\.md/);
  assert.equal(git(bare, "log", "--format=%s", "main"), "initial", "the repository has neither commit yet");
  const [a, b] = await pending(ws);
  assert.ok(a !== undefined && b !== undefined);
  await assert.rejects(
    unary(h.decisions, h.decisions.approve, {
      workspaceId: ws,
      actionId: b,
      decidedBy: "user:t",
      includeDependencies: false,
      descriptionDigests: {},
    }),
    (err: ServiceError) => new RegExp(`undecided action\\(s\\) ${a}`).test(err.details),
  );
  const res = await unary(h.decisions, h.decisions.approve, {
    workspaceId: ws,
    actionId: b,
    decidedBy: "user:t",
    includeDependencies: true,
    descriptionDigests: {},
  });
  assert.deepEqual(
    res.actions.filter((r) => r.id === a || r.id === b).map((r) => r.status),
    [ActionStatus.ACTION_STATUS_APPLIED, ActionStatus.ACTION_STATUS_APPLIED],
  );
  assert.equal(git(bare, "log", "--format=%s", "main"), "B\nA\ninitial");
});

test("rejecting A rejects B with cascadedFrom A and the repository never sees either", async () => {
  const bare = makeRepo("rejected");
  const ws = await h.workspace(`git+file://${bare}`);
  returned(await h.exec(ws, twoCommits));
  const [a, b] = await pending(ws);
  const res = await unary(h.decisions, h.decisions.reject, {
    workspaceId: ws,
    actionId: a!,
    decidedBy: "user:t",
    reason: "no",
  });
  const rb = res.actions.find((r) => r.id === b);
  assert.equal(rb?.status, ActionStatus.ACTION_STATUS_REJECTED);
  assert.equal(rb?.cascadedFrom, a);
  assert.equal(git(bare, "log", "--format=%s", "main"), "initial");
});

test("revert: a person reverts an applied commit; the revert is a new pending action, applied only when approved", async () => {
  const bare = makeRepo("reverted");
  const ws = await h.workspace(`git+file://${bare}`);
  returned(
    await h.exec(
      ws,
      `export default async (env: any) => env.REPO.commit({ branch: "main", message: "A", changes: [{ path: "docs/readme.md", content: "changed\\n" }] })`,
    ),
  );
  const [a] = await pending(ws);
  await unary(h.decisions, h.decisions.approve, {
    workspaceId: ws,
    actionId: a!,
    decidedBy: "user:t",
    includeDependencies: false,
    descriptionDigests: {},
  });
  assert.equal(git(bare, "show", "main:docs/readme.md"), "changed");
  const { revert } = await unary(h.decisions, h.decisions.requestRevert, {
    workspaceId: ws,
    actionId: a!,
    requestedBy: "user:t",
  });
  assert.ok(revert);
  assert.equal(revert.status, ActionStatus.ACTION_STATUS_PENDING);
  assert.equal(revert.description?.implementsRevert, a);
  assert.match(revert.description?.description ?? "", /-changed\n\+hello/);
  assert.equal(git(bare, "log", "--format=%s", "main"), "A\ninitial", "nothing written before approval");
  await assert.rejects(
    unary(h.decisions, h.decisions.requestRevert, { workspaceId: ws, actionId: a!, requestedBy: "user:t" }),
    (err: ServiceError) => /already/.test(err.details),
  );
  await unary(h.decisions, h.decisions.approve, {
    workspaceId: ws,
    actionId: revert.id,
    decidedBy: "user:u",
    includeDependencies: false,
    descriptionDigests: {},
  });
  assert.equal(git(bare, "show", "main:docs/readme.md"), "hello");
  assert.equal(git(bare, "log", "--format=%s", "main"), 'Revert "A"\nA\ninitial');
});

test("a 3 MiB file of worst-case text read page by page through the real sandbox: every page fits the frame cap, every byte comes back, one observation per page", async () => {
  // Control characters (6 bytes of JSON each), quotes, backslashes and multi-byte characters; no NUL.
  const unit = '\u0001\u001f"\\é漢😀\n';
  const content = unit.repeat(Math.ceil((3 * 1024 * 1024) / Buffer.byteLength(unit)));
  const bare = makeBareRepo(h.dir, join(h.dir, "repos", "big.git"), { "big.txt": content });
  const ws = await h.workspace(`git+file://${bare}`);
  let expected = 2166136261;
  for (let i = 0; i < content.length; i++)
    expected = Math.imul(expected ^ content.charCodeAt(i), 16777619) >>> 0;
  const r = await h.exec(
    ws,
    `export default async (env: any) => {
      let page = 0, chars = 0, hash = 2166136261, more = true, total = 0;
      while (more) {
        const c = await env.REPO.readFilePage({ path: "big.txt", page });
        for (let i = 0; i < c.content.length; i++) hash = Math.imul(hash ^ c.content.charCodeAt(i), 16777619) >>> 0;
        chars += c.content.length;
        more = c.more;
        total = c.totalBytes;
        page++;
      }
      return { pages: page, chars, hash, total };
    }`,
    120_000,
  );
  const got = returned<{ pages: number; chars: number; hash: number; total: number }>(r);
  assert.equal(got.total, Buffer.byteLength(content));
  assert.equal(got.chars, content.length);
  assert.equal(got.hash, expected, "the pages put together are the file");
  assert.ok(got.pages > 3, `${got.pages} pages`);
  const observed = (await h.stack.store.readStream(`workspace-${ws}`)).filter(
    (e) => e.type === "ObservationRecorded",
  );
  assert.equal(observed.length, got.pages, "one observation per page returned, none for a page not returned");
});
