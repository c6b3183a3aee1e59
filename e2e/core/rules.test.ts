/**
 * Auto-approval rules that could never fire are refused with the reason, across the real services:
 * the real filesystem MCP server from npm (vetted as FILES, and the same server registered byo as
 * SCRATCH), the MCP gatekeeper publishing the binding's action kinds at introduction, the kernel,
 * the approval service, the gateway, and the `gatehouse` CLI itself.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { devRegistry } from "@gatehouse/dev-stack";
import { ActionStatus } from "@gatehouse/proto";
import { waitUntil } from "@gatehouse/service-kit";
import { status } from "@grpc/grpc-js";
import { api } from "../support/gateway-client.ts";
import { type Harness, returned, startHarness, unary } from "../support/harness.ts";

let h: Harness;
before(async () => {
  h = await startHarness((dir) => {
    const registry = devRegistry(dir);
    // The same server, registered without vetting: none of its tools may be auto-approved.
    registry.servers.scratch = { ...registry.servers.files!, vetted: false };
    return registry;
  });
});
after(async () => {
  await h?.close();
});

const setRule = (ws: string, binding: string, tag: string, enabled = true) =>
  unary(h.decisions, h.decisions.setAutoApprovalRule, {
    workspaceId: ws,
    binding,
    actionKindTag: tag,
    enabled,
    setBy: "user:admin",
  });

async function refused(p: Promise<unknown>, code: status, message: RegExp): Promise<void> {
  await assert.rejects(p, (e: { code?: number; details?: string }) => {
    assert.equal(e.code, code, `expected ${status[code]}, got ${e.code}: ${e.details}`);
    assert.match(e.details ?? "", message);
    return true;
  });
}

const CLI = resolve(import.meta.dirname, "../../apps/cli/src/main.ts");
/** Runs `gatehouse <args>` against this stack; resolves with its exit code and stderr. */
async function gatehouse(...args: string[]): Promise<{ code: number; stderr: string }> {
  try {
    await promisify(execFile)(process.execPath, ["--no-node-snapshot", "--import", "tsx", CLI, ...args], {
      env: {
        ...process.env,
        GATEHOUSE_KERNEL_ADDRESS: h.stack.addresses.kernel,
        GATEHOUSE_APPROVAL_ADDRESS: h.stack.addresses.approval,
        // The person the rule change is recorded for: rule refuses without one (CI has no USER).
        GATEHOUSE_USER: "dev-approver",
      },
      timeout: 120_000,
    });
    return { code: 0, stderr: "" };
  } catch (e) {
    const err = e as { code?: number; stderr?: string };
    return { code: err.code ?? -1, stderr: err.stderr ?? "" };
  }
}

test("a binding publishes its action kinds: which a rule may auto-approve, and why the others never", async () => {
  const ws = await h.workspace("mcp://files", "mcp://scratch");
  const res = await unary(h.kernel, h.kernel.describeBindings, { workspaceId: ws });
  const kindsOf = (name: string) =>
    new Map((res.bindings.find((b) => b.name === name)?.actionKinds?.kinds ?? []).map((k) => [k.tag, k]));
  const files = kindsOf("FILES");
  assert.equal(files.get("mcp.tool.create_directory")?.autoApprovable, true);
  assert.equal(files.get("mcp.tool.write_file")?.autoApprovable, false);
  assert.match(files.get("mcp.tool.write_file")?.notAutoApprovableReason ?? "", /destructiveHint/);
  assert.ok(!files.has("mcp.tool.read_text_file"), "reads are not action kinds");
  const scratch = kindsOf("SCRATCH");
  assert.equal(scratch.get("mcp.tool.create_directory")?.autoApprovable, false);
  assert.match(scratch.get("mcp.tool.create_directory")?.notAutoApprovableReason ?? "", /endpoint byo/);
});

test("a rule for a destructive tool, a byo endpoint's tool or a tag the binding cannot carry is refused with the reason; a valid one fires", async () => {
  const ws = await h.workspace("mcp://files", "mcp://scratch");
  await refused(
    setRule(ws, "FILES", "mcp.tool.write_file"),
    status.FAILED_PRECONDITION,
    /"mcp\.tool\.write_file" on binding "FILES" can never be auto-approved \(.*destructiveHint.*\).*auto-approvable tags: .*"mcp\.tool\.create_directory"/,
  );
  await refused(
    setRule(ws, "SCRATCH", "mcp.tool.create_directory"),
    status.FAILED_PRECONDITION,
    /on binding "SCRATCH" can never be auto-approved \(endpoint byo/,
  );
  await refused(
    setRule(ws, "FILES", "mcp.tool.create_entities"),
    status.INVALID_ARGUMENT,
    /no action of binding "FILES" can carry "mcp\.tool\.create_entities"/,
  );
  const log = await unary(h.decisions, h.decisions.getLog, { workspaceId: ws });
  assert.deepEqual(log.rules, [], "no refused rule was stored");

  await setRule(ws, "FILES", "mcp.tool.create_directory");
  const r = await h.exec(
    ws,
    `export default async (env: any) => {
      const dir = (await env.FILES.list_allowed_directories({})).content[0].text.split("\\n").find((l: string) => l.startsWith("/"));
      return (await env.FILES.create_directory({ path: dir + "/by-rule" })).actionId;
    }`,
  );
  const id = returned<number>(r);
  // SubmitAction answers before its binding's drain (issue 13: no lifecycle work on the agent's
  // call): the rule's apply comes after exec returns, so wait for it.
  const a = await waitUntil(
    `action ${id} to be auto-approved and applied`,
    async () => {
      const now = await unary(h.decisions, h.decisions.getAction, { workspaceId: ws, actionId: id });
      return now.status === ActionStatus.ACTION_STATUS_APPLIED ? now : undefined;
    },
    { timeoutMs: 120_000, intervalMs: 100 },
  );
  assert.equal(a.status, ActionStatus.ACTION_STATUS_APPLIED);
  assert.equal(a.decidedBy, "rule:FILES/mcp.tool.create_directory");
  assert.ok(existsSync(join(h.dir, "files", "by-rule")));
});

test("the CLI and the gateway route say why a rule is refused; turning a rule off works for a rule that is on", async () => {
  const ws = await h.workspace("mcp://files");
  const cli = await gatehouse("rule", ws, "FILES", "mcp.tool.move_file");
  assert.equal(cli.code, 1);
  assert.match(cli.stderr, /"mcp\.tool\.move_file" on binding "FILES" can never be auto-approved/);
  assert.equal((await gatehouse("rule", ws, "FILES", "mcp.tool.create_directory")).code, 0);
  assert.equal((await gatehouse("rule", ws, "FILES", "mcp.tool.create_directory", "--off")).code, 0);

  const admin = h.stack.devTokens.find((t) => t.subject === "dev-admin")?.token ?? "";
  const put = (actionKindTag: string) =>
    api<{ error: { code: string; message: string } }>(
      h.stack.addresses.gateway,
      admin,
      "PUT",
      `/api/workspaces/${ws}/rules`,
      { binding: "FILES", actionKindTag, enabled: true },
    );
  const unknown = await put("mcp.tool.nope");
  assert.equal(unknown.status, 400);
  assert.match(unknown.body.error.message, /no action of binding "FILES" can carry "mcp\.tool\.nope"/);
  const never = await put("mcp.tool.write_file");
  assert.equal(never.status, 409);
  assert.match(never.body.error.message, /can never be auto-approved/);
});

test("`rule --off` of a rule that never existed is refused naming the rule and how to list the rules, and records nothing; the gateway route refuses it too", async () => {
  const ws = await h.workspace("mcp://files");
  assert.equal((await gatehouse("rule", ws, "FILES", "mcp.tool.create_directory")).code, 0);
  // The log may follow the append: wait until it shows the rule, then take its revision.
  const before = (
    await waitUntil("the rule in the log", async () => {
      const log = await unary(h.decisions, h.decisions.getLog, { workspaceId: ws });
      return log.rules.length === 1 ? log : undefined;
    })
  ).revision;

  const cli = await gatehouse("rule", ws, "FILES", "mcp.tool.move_file", "--off");
  assert.equal(cli.code, 1);
  assert.match(
    cli.stderr,
    /^gatehouse: <action-kind-tag>: binding "FILES" has no auto-approval rule for "mcp\.tool\.move_file" that is on \(it never existed, or was turned off already\), so there is nothing to turn off and nothing was recorded; its rules that are on: "mcp\.tool\.create_directory"; list the workspace's rules with `gatehouse log <workspace>`\n$/,
  );
  const admin = h.stack.devTokens.find((t) => t.subject === "dev-admin")?.token ?? "";
  const off = await api<{ error: { code: string; message: string } }>(
    h.stack.addresses.gateway,
    admin,
    "PUT",
    `/api/workspaces/${ws}/rules`,
    { binding: "FILES", actionKindTag: "mcp.tool.never", enabled: false },
  );
  assert.equal(off.status, 404);
  assert.match(off.body.error.message, /no auto-approval rule for "mcp\.tool\.never" that is on/);

  const log = await unary(h.decisions, h.decisions.getLog, { workspaceId: ws });
  assert.equal(log.revision, before, "a refused --off appends nothing");
  assert.deepEqual(
    log.rules.map((r) => `${r.binding}/${r.actionKindTag}`),
    ["FILES/mcp.tool.create_directory"],
  );
});
