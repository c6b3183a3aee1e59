/**
 * The restricted-data latch across the real services: once an observation carries restricted data,
 * auto-approval stops and writes to other bindings are refused (and recorded as refusals in the log).
 */
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { logTable } from "@gatehouse/cli/output";
import { devRegistry } from "@gatehouse/dev-stack";
import { createRemotes } from "@gatehouse/gatekeeper-git";
import { waitUntil } from "@gatehouse/service-kit";
import { git, makeBareRepo } from "../support/git-repo.ts";
import { type Harness, returned, startHarness, unary } from "../support/harness.ts";

let h: Harness;
before(async () => {
  h = await startHarness(
    (dir) => {
      const registry = devRegistry(dir);
      registry.servers.files!.restrictedTools = ["read_text_file"];
      return registry;
    },
    // An allowed remote for the git push test; the latch refuses before anything is sent to it.
    { gitRemotes: createRemotes({ remotes: [{ url: "http://127.0.0.1:9/" }] }) },
  );
});
after(async () => {
  await h.close();
});

const dirOf = `(await env.FILES.list_allowed_directories({})).content[0].text.split("\\n").find((l: string) => l.startsWith("/"))`;

test("after a flagged observation auto-approval stops and writes to other bindings are refused", async () => {
  writeFileSync(join(h.dir, "files", "salaries.csv"), "alice,100\n");
  const ws = await h.workspace("mcp://files", "mcp://memory");
  await unary(h.decisions, h.decisions.setAutoApprovalRule, {
    workspaceId: ws,
    binding: "FILES",
    actionKindTag: "mcp.tool.create_directory",
    enabled: true,
    setBy: "user:admin",
  });
  // Before the latch, the rule applies — after exec returns: SubmitAction answers before its
  // binding's drain (issue 13: no lifecycle work on the agent's call).
  returned(
    await h.exec(
      ws,
      `export default async (env: any) => env.FILES.create_directory({ path: ${dirOf} + "/before" })`,
    ),
  );
  await waitUntil(
    "the rule to apply the create_directory made before the latch",
    () => existsSync(join(h.dir, "files", "before")),
    { timeoutMs: 120_000, intervalMs: 100 },
  );
  assert.ok(existsSync(join(h.dir, "files", "before")));

  const out = returned<{ text: string; memoryWrite: string; filesWrite: number }>(
    await h.exec(
      ws,
      `export default async (env: any) => {
        const dir = ${dirOf};
        const text = (await env.FILES.read_text_file({ path: dir + "/salaries.csv" })).content[0].text;
        let memoryWrite = "submitted";
        try {
          await env.MEMORY.create_entities({ entities: [{ name: text, entityType: "leak", observations: [] }] });
        } catch (e: any) { memoryWrite = "refused: " + e.message; }
        const filesWrite = (await env.FILES.create_directory({ path: dir + "/after" })).actionId;
        return { text, memoryWrite, filesWrite };
      }`,
    ),
  );
  assert.match(out.text, /alice/);
  assert.match(out.memoryWrite, /^refused: .*(restricted|latch)/i);
  assert.ok(!existsSync(join(h.dir, "files", "after")), "the rule no longer auto-approves");
  const view = await unary(h.decisions, h.decisions.getLog, { workspaceId: ws });
  assert.equal(view.latched, true);
  const action = await unary(h.decisions, h.decisions.getAction, {
    workspaceId: ws,
    actionId: out.filesWrite,
  });
  assert.equal(action.status, 1, "pending, waiting for a person");
  assert.equal(h.memoryState().length, 0, "nothing reached the memory server");
  const submitted = (await h.stack.store.readStream(`workspace-${ws}`)).filter(
    (e) => e.type === "ActionSubmitted" && (e.data as { binding: string }).binding === "MEMORY",
  );
  assert.equal(submitted.length, 0, "the refused write staged nothing");
  // ...but the log shows it was tried, and why it was refused.
  const refusals = view.entries.flatMap((e) => (e.entry?.$case === "refusal" ? [e.entry.refusal] : []));
  assert.equal(refusals.length, 1);
  assert.equal(refusals[0]?.binding, "MEMORY");
  assert.match(
    refusals[0]?.reason ?? "",
    /binding "MEMORY": the workspace read restricted data through "FILES"/,
  );
  assert.match(logTable(view), new RegExp(`#${refusals[0]?.id} refused  MEMORY  .*: binding "MEMORY"`));
});

test("after the latch, git push is refused on the repository's own binding; the refusal is in the log and local reads go on", async () => {
  writeFileSync(join(h.dir, "files", "secret.txt"), "restricted\n");
  const bare = makeBareRepo(h.dir, join(h.dir, "repos", "latched.git"), { "notes.md": "notes\n" });
  git(bare, "remote", "set-url", "origin", "http://127.0.0.1:9/up.git");
  const ws = await h.workspace("mcp://files", `git+file://${bare}`);
  const before = returned<string>(
    await h.exec(ws, `export default async (env: any) => (await env.REPO.push({ branch: "main" })).id`),
  );
  assert.equal(before, "~1", "before the latch a push is staged for approval");
  await unary(h.decisions, h.decisions.reject, {
    workspaceId: ws,
    actionId: (await pendingIds(ws))[0]!,
    decidedBy: "user:t",
    reason: "not now",
  });
  const out = returned<{ push: string; readme: string }>(
    await h.exec(
      ws,
      `export default async (env: any) => {
        await env.FILES.read_text_file({ path: ${dirOf} + "/secret.txt" });
        let push = "staged";
        try { await env.REPO.push({ branch: "main" }); } catch (e: any) { push = "refused: " + e.message; }
        const readme = await env.REPO.readFile({ path: "notes.md" });
        return { push, readme };
      }`,
    ),
  );
  assert.match(out.push, /^refused: .*restricted data/);
  assert.equal(out.readme, "notes\n", "local reads go on after the latch");
  const view = await unary(h.decisions, h.decisions.getLog, { workspaceId: ws });
  assert.equal(view.latched, true);
  const refusal = view.entries.flatMap((e) => (e.entry?.$case === "refusal" ? [e.entry.refusal] : []));
  assert.equal(refusal.length, 1);
  assert.equal(refusal[0]?.binding, "REPO");
  assert.equal(refusal[0]?.description?.actionKind?.tag, "git.push");
  assert.equal(refusal[0]?.description?.egress, true);
  assert.match(logTable(view), new RegExp(`#${refusal[0]?.id} refused  REPO  `));
  assert.deepEqual(await pendingIds(ws), [], "nothing was staged");
});

async function pendingIds(ws: string): Promise<number[]> {
  const res = await unary(h.decisions, h.decisions.listActions, { workspaceId: ws, pendingOnly: true });
  return res.actions.map((a) => a.id);
}
