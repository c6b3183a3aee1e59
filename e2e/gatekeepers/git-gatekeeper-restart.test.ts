/**
 * Provisional ids survive a restart of the whole dev stack (`gatehouse dev` stopped and started on
 * the same data dir): a git commit `~1`, applied, still names the real commit it became in
 * readFile, listFiles, log, diff and createBranch after the restart, because the git gatekeeper
 * learns what it became from the approval service's stream, not from its memory.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { type DevStack, startDevStack } from "@gatehouse/dev-stack";
import { ActionStatus, DecisionsClient, KernelClient } from "@gatehouse/proto";
import { callUnary as unary } from "@gatehouse/service-kit";
import { credentials } from "@grpc/grpc-js";
import { git, makeBareRepo } from "../support/git-repo.ts";
import { DEV_MEMBERS, DEV_OWNER, returned } from "../support/harness.ts";

/** A started stack on `dir` with its kernel and decisions clients. */
async function start(
  dir: string,
): Promise<{ stack: DevStack; kernel: KernelClient; decisions: DecisionsClient }> {
  const stack = await startDevStack({ dataDir: dir });
  return {
    stack,
    kernel: new KernelClient(stack.addresses.kernel, credentials.createInsecure()),
    decisions: new DecisionsClient(stack.addresses.approval, credentials.createInsecure()),
  };
}

function exec(kernel: KernelClient, ws: string, code: string) {
  return unary(kernel, kernel.executeCode, {
    workspaceId: ws,
    code,
    caller: { kind: "agent", id: "chat-1" },
    limits: { wallTimeMs: 60_000, heapMb: 0, outputBytes: 0 },
    executionId: "",
  });
}

test("an applied ~1 names the real commit after gatehouse dev restarted: readFile, listFiles, log, diff, createBranch", async () => {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-restart-"));
  let s = await start(dir);
  try {
    const bare = makeBareRepo(dir, join(dir, "repos", "kept.git"), { "docs/readme.md": "hello\n" });
    const ws = (
      await unary(s.kernel, s.kernel.createWorkspace, {
        name: "test",
        owner: DEV_OWNER,
        members: DEV_MEMBERS,
      })
    ).id;
    await unary(s.kernel, s.kernel.introduceResource, {
      workspaceId: ws,
      url: `git+file://${bare}`,
      name: "",
    });
    const made = returned<{ id: string }>(
      await exec(
        s.kernel,
        ws,
        `export default async (env: any) => env.REPO.commit({ branch: "main", message: "A", changes: [{ path: "docs/a.md", content: "a\\n" }] })`,
      ),
    );
    assert.equal(made.id, "~1");
    const listed = await unary(s.decisions, s.decisions.listActions, { workspaceId: ws, pendingOnly: true });
    const id = listed.actions[0]!.id;
    const res = await unary(s.decisions, s.decisions.approve, {
      workspaceId: ws,
      actionId: id,
      decidedBy: "user:t",
      includeDependencies: false,
      descriptionDigests: {},
    });
    assert.equal(res.actions.find((a) => a.id === id)?.status, ActionStatus.ACTION_STATUS_APPLIED);
    const sha = git(bare, "rev-parse", "main");
    const initial = git(bare, "rev-parse", "main~1");

    s.kernel.close();
    s.decisions.close();
    await s.stack.close();
    s = await start(dir);

    const after = returned<{
      text: string;
      files: string[];
      log: string[];
      diff: string[];
      branch: { id: string };
    }>(
      await exec(
        s.kernel,
        ws,
        `export default async (env: any) => ({
          text: await env.REPO.readFile({ path: "docs/a.md", ref: "~1" }),
          files: (await env.REPO.listFiles({ ref: "~1" })).files,
          log: (await env.REPO.log({ ref: "~1" })).commits.map((c: any) => c.id),
          diff: (await env.REPO.diff({ from: "${initial}", to: "~1" })).files.map((f: any) => f.path),
          branch: await env.REPO.createBranch({ name: "from-one", from: "~1" }),
        })`,
      ),
    );
    assert.equal(after.text, "a\n");
    assert.deepEqual(after.files, ["docs/a.md", "docs/readme.md"]);
    assert.equal(after.log[0], sha, "the real commit, not a pending one");
    assert.deepEqual(after.diff, ["docs/a.md"]);
    assert.equal(after.branch.id, "~2", "ids handed out before the restart are not reused");
    const branch = (await unary(s.decisions, s.decisions.listActions, { workspaceId: ws, pendingOnly: true }))
      .actions[0]!.id;
    await unary(s.decisions, s.decisions.approve, {
      workspaceId: ws,
      actionId: branch,
      decidedBy: "user:t",
      includeDependencies: false,
      descriptionDigests: {},
    });
    assert.equal(git(bare, "rev-parse", "from-one"), sha, "the branch starts at the commit ~1 became");
  } finally {
    s.kernel.close();
    s.decisions.close();
    await s.stack.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
