/**
 * Workspace membership at the gateway, over the real dev stack (kernel, approval service, Temporal,
 * the real memory MCP server) and its in-process notice bus: a person reaches only the workspaces
 * they own or were added to, whatever their role — on every workspace route, the inbox, the
 * workspace list and the event stream — and a refusal appends nothing. The owner adds members;
 * nobody else can; the web app (in Chromium, playwright-core) says so plainly and follows a change
 * live. Dev tokens: dev-approver (approver), dev-auditor (auditor), dev-admin (admin).
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { writeDevFile } from "@gatehouse/dev-stack";
import type {
  ApiError,
  InboxResponse,
  LogResponse,
  MembersResponse,
  WorkspaceSummary,
  WorkspacesResponse,
} from "@gatehouse/gateway-contract";
import type { Browser } from "playwright-core";
import { launchBrowser, openApp, SCREENSHOTS } from "../support/browser.ts";
import { api, openEvents } from "../support/gateway-client.ts";
import { type Harness, returned, startHarness, unary } from "../support/harness.ts";

let h: Harness;
let base: string;
let browser: Browser | undefined;
const tokenOf = (subject: string) => h.stack.devTokens.find((t) => t.subject === subject)?.token ?? "";

before(async () => {
  h = await startHarness();
  base = h.stack.addresses.gateway;
});
after(async () => {
  await browser?.close();
  await h?.close();
});

const oneWrite = `export default async (env: any) =>
  (await env.MEMORY.create_entities({ entities: [{ name: "Members", entityType: "t", observations: [] }] })).actionId;`;

/** A workspace owned by dev-admin alone, with the memory server and one pending write. */
async function adminsWorkspace(): Promise<{ ws: string; action: number }> {
  const ws = await h.workspaceOf("user:dev-admin");
  await unary(h.kernel, h.kernel.introduceResource, { workspaceId: ws, url: "mcp://memory", name: "" });
  return { ws, action: returned<number>(await h.exec(ws, oneWrite)) };
}

const revisionOf = (ws: string) => h.stack.store.streamRevision(`workspace-${ws}`);

test("a person who is not a member gets 403 on every workspace route, naming the workspace and its owner, and nothing is appended", async () => {
  const { ws, action } = await adminsWorkspace();
  const before = await revisionOf(ws);
  const routes: Array<[string, string, unknown]> = [
    ["GET", `/api/workspaces/${ws}/log`, undefined],
    ["GET", `/api/workspaces/${ws}/actions/${action}`, undefined],
    ["GET", `/api/workspaces/${ws}/bindings`, undefined],
    ["GET", `/api/workspaces/${ws}/members`, undefined],
    ["GET", `/api/inbox?workspace=${ws}`, undefined],
    ["POST", `/api/workspaces/${ws}/actions/${action}/approve`, {}],
    ["POST", `/api/workspaces/${ws}/actions/${action}/reject`, { reason: "not mine" }],
    ["POST", `/api/workspaces/${ws}/approve-batch`, { actionIds: [action] }],
    ["PUT", `/api/workspaces/${ws}/rules`, { binding: "MEMORY", actionKindTag: "mcp.tool.x", enabled: true }],
    ["POST", `/api/workspaces/${ws}/bindings/MEMORY/remove`, {}],
    ["POST", `/api/workspaces/${ws}/members`, { member: "user:dev-approver" }],
  ];
  for (const who of ["dev-approver", "dev-auditor"]) {
    for (const [method, path, body] of routes) {
      const res = await api<ApiError>(base, tokenOf(who), method, path, body);
      assert.equal(res.status, 403, `${who} ${method} ${path}: ${JSON.stringify(res.body)}`);
      assert.equal(res.body.error.code, "forbidden");
      assert.match(
        res.body.error.message,
        new RegExp(
          `^${who} is not a member of workspace ${ws}: a person reaches only the workspaces they own or were added to; ask its owner, user:dev-admin, to add you \\(\`gatehouse members add ${ws} user:${who}\``,
        ),
        `${who} ${method} ${path}`,
      );
    }
  }
  assert.equal(await revisionOf(ws), before, "nothing was appended");
  const owner = await api<LogResponse>(base, tokenOf("dev-admin"), "GET", `/api/workspaces/${ws}/log`);
  assert.equal(owner.status, 200, "the owner reads it");
  const unknown = await api<ApiError>(base, tokenOf("dev-approver"), "GET", "/api/workspaces/wnothere00/log");
  assert.equal(unknown.status, 404);
  assert.match(unknown.body.error.message, /workspace "wnothere00" does not exist/);
});

test("the inbox and the workspace list hold only the workspaces the person owns or was added to", async () => {
  const { ws: hidden } = await adminsWorkspace();
  const shared = await h.workspace("mcp://memory");
  const mine = await h.workspaceOf("user:dev-approver");
  const approver = tokenOf("dev-approver");
  const inbox = await api<InboxResponse>(base, approver, "GET", "/api/inbox");
  assert.equal(inbox.status, 200);
  const ids = inbox.body.workspaces.map((w) => w.id);
  assert.ok(ids.includes(shared) && ids.includes(mine), "its own and the shared workspace");
  assert.ok(!ids.includes(hidden), "not dev-admin's own workspace");
  const list = await api<WorkspacesResponse>(base, approver, "GET", "/api/workspaces");
  assert.deepEqual(
    list.body.workspaces.find((w) => w.id === mine),
    { id: mine, name: "test", owner: "user:dev-approver", members: [] },
  );
  assert.ok(!list.body.workspaces.some((w) => w.id === hidden));
  const admin = await api<WorkspacesResponse>(base, tokenOf("dev-admin"), "GET", "/api/workspaces");
  assert.ok(!admin.body.workspaces.some((w) => w.id === mine), "no role bypasses membership, admin included");
});

test("the event stream carries no notice of a workspace the person does not reach; once the owner adds them it resyncs and carries its notices", async () => {
  const { ws } = await adminsWorkspace();
  const own = await h.workspaceOf("user:dev-approver");
  const stream = await openEvents(base, tokenOf("dev-approver"));
  try {
    await stream.waitFor((e) => e.event === "resync");
    const noticeOf = (id: string) => (e: { event: string; data: unknown }) =>
      e.event === "notice" && (e.data as { workspaceId: string }).workspaceId === id;
    // A write in the admin's workspace, then a change in the approver's own: notices arrive in order,
    // so once the second is here the first would have been too.
    returned(await h.exec(ws, oneWrite));
    const added = await api<MembersResponse>(
      base,
      tokenOf("dev-approver"),
      "POST",
      `/api/workspaces/${own}/members`,
      {
        member: "user:dev-auditor",
      },
    );
    assert.equal(added.status, 200, JSON.stringify(added.body));
    await stream.waitFor(noticeOf(own));
    assert.ok(!stream.events.some(noticeOf(ws)), "no notice of the admin's workspace");

    const resyncs = stream.events.filter((e) => e.event === "resync").length;
    const joined = await api<MembersResponse>(
      base,
      tokenOf("dev-admin"),
      "POST",
      `/api/workspaces/${ws}/members`,
      {
        member: "user:dev-approver",
      },
    );
    assert.equal(joined.status, 200, JSON.stringify(joined.body));
    assert.deepEqual(joined.body, {
      workspaceId: ws,
      owner: "user:dev-admin",
      members: ["user:dev-approver"],
    });
    await stream.waitFor(
      (e) =>
        e.event === "resync" &&
        stream.events.filter((x) => x.event === "resync").length > resyncs &&
        (e.data as { reason: string }).reason.includes(ws),
    );
    const log = await api<LogResponse>(base, tokenOf("dev-approver"), "GET", `/api/workspaces/${ws}/log`);
    assert.equal(log.status, 200, "the new member reads the log");
    returned(await h.exec(ws, oneWrite));
    await stream.waitFor(noticeOf(ws));
  } finally {
    stream.close();
  }
});

test("only the owner adds members: a member of any role gets 403 naming the owner; a second add is 409, a malformed person 400, and nothing is appended", async () => {
  const ws = await h.workspace();
  const before = await revisionOf(ws);
  for (const who of ["dev-approver", "dev-auditor"]) {
    const res = await api<ApiError>(base, tokenOf(who), "POST", `/api/workspaces/${ws}/members`, {
      member: "user:carol",
    });
    assert.equal(res.status, 403, who);
    assert.match(
      res.body.error.message,
      new RegExp(
        `user:${who} is a member of workspace ${ws} but not its owner: adding members needs the owner \\(user:dev-admin\\)`,
      ),
    );
  }
  const again = await api<ApiError>(base, tokenOf("dev-admin"), "POST", `/api/workspaces/${ws}/members`, {
    member: "user:dev-approver",
  });
  assert.equal(again.status, 409);
  assert.match(again.body.error.message, /user:dev-approver is already a member of workspace/);
  const bad = await api<ApiError>(base, tokenOf("dev-admin"), "POST", `/api/workspaces/${ws}/members`, {
    member: "carol smith",
  });
  assert.equal(bad.status, 400);
  assert.match(bad.body.error.message, /^member: a person is "user:" and the subject of their sign-in token/);
  assert.equal(await revisionOf(ws), before, "nothing was appended");
  const listed = await api<MembersResponse>(
    base,
    tokenOf("dev-auditor"),
    "GET",
    `/api/workspaces/${ws}/members`,
  );
  assert.deepEqual(listed.body, {
    workspaceId: ws,
    owner: "user:dev-admin",
    members: ["user:dev-approver", "user:dev-auditor"],
  });
});

test("the owner removes a member: their open event stream drops the workspace with a resync, then every request of theirs is refused; only the owner removes, and not themselves", async () => {
  const { ws } = await adminsWorkspace();
  const own = await h.workspaceOf("user:dev-approver");
  await api(base, tokenOf("dev-admin"), "POST", `/api/workspaces/${ws}/members`, {
    member: "user:dev-approver",
  });
  await api(base, tokenOf("dev-admin"), "POST", `/api/workspaces/${ws}/members`, {
    member: "user:dev-auditor",
  });
  const stream = await openEvents(base, tokenOf("dev-approver"));
  try {
    const noticeOf = (id: string) => (e: { event: string; data: unknown }) =>
      e.event === "notice" && (e.data as { workspaceId: string }).workspaceId === id;
    await stream.waitFor((e) => e.event === "resync");
    returned(await h.exec(ws, oneWrite));
    await stream.waitFor(noticeOf(ws));

    const byMember = await api<ApiError>(
      base,
      tokenOf("dev-auditor"),
      "POST",
      `/api/workspaces/${ws}/members/remove`,
      {
        member: "user:dev-approver",
      },
    );
    assert.equal(byMember.status, 403);
    assert.match(byMember.body.error.message, /removing members needs the owner \(user:dev-admin\)/);
    const owner = await api<ApiError>(
      base,
      tokenOf("dev-admin"),
      "POST",
      `/api/workspaces/${ws}/members/remove`,
      {
        member: "user:dev-admin",
      },
    );
    assert.equal(owner.status, 409);
    assert.match(owner.body.error.message, /user:dev-admin owns workspace .* and cannot be removed/);

    const removed = await api<MembersResponse>(
      base,
      tokenOf("dev-admin"),
      "POST",
      `/api/workspaces/${ws}/members/remove`,
      {
        member: "user:dev-approver",
      },
    );
    assert.equal(removed.status, 200, JSON.stringify(removed.body));
    assert.deepEqual(removed.body.members, ["user:dev-auditor"]);
    await stream.waitFor(
      (e) =>
        e.event === "resync" &&
        (e.data as { reason: string }).reason === `you no longer reach workspace ${ws}: read everything once`,
    );
    const gone = await api<ApiError>(base, tokenOf("dev-approver"), "GET", `/api/workspaces/${ws}/log`);
    assert.equal(gone.status, 403);
    const notAMember = await api<ApiError>(
      base,
      tokenOf("dev-admin"),
      "POST",
      `/api/workspaces/${ws}/members/remove`,
      {
        member: "user:dev-approver",
      },
    );
    assert.equal(notAMember.status, 404);
    assert.match(notAMember.body.error.message, /user:dev-approver is not a member of workspace/);

    // Notices stay in order: once the approver's own workspace's notice is here, one of the removed
    // workspace's would have been too.
    const before = stream.events.filter(noticeOf(ws)).length;
    returned(await h.exec(ws, oneWrite));
    await api(base, tokenOf("dev-approver"), "POST", `/api/workspaces/${own}/members`, {
      member: "user:dev-auditor",
    });
    await stream.waitFor(noticeOf(own));
    assert.equal(
      stream.events.filter(noticeOf(ws)).length,
      before,
      "no notice of the workspace after removal",
    );
  } finally {
    stream.close();
  }
});

test("POST /api/workspaces: the signed-in person owns the new workspace, whatever their role; removing a binding is the owner's, not an admin member's", async () => {
  const created = await api<WorkspaceSummary>(base, tokenOf("dev-approver"), "POST", "/api/workspaces", {
    name: "approver's",
    members: ["user:dev-admin"],
  });
  assert.equal(created.status, 201, JSON.stringify(created.body));
  assert.equal(created.body.owner, "user:dev-approver");
  assert.deepEqual(created.body.members, ["user:dev-admin"]);
  const ws = created.body.id;
  await unary(h.kernel, h.kernel.introduceResource, { workspaceId: ws, url: "mcp://memory", name: "" });
  const path = `/api/workspaces/${ws}/bindings/MEMORY/remove`;
  const admin = await api<ApiError>(base, tokenOf("dev-admin"), "POST", path, {});
  assert.equal(admin.status, 403);
  assert.match(admin.body.error.message, /removing a binding needs the owner \(user:dev-approver\)/);
  const owner = await api(base, tokenOf("dev-approver"), "POST", path, { reason: "done" });
  assert.equal(owner.status, 200, JSON.stringify(owner.body));

  const bad = await api<ApiError>(base, tokenOf("dev-auditor"), "POST", "/api/workspaces", {
    members: ["x y"],
  });
  assert.equal(bad.status, 400);
  assert.match(bad.body.error.message, /^members\.0: a person is "user:"/);
  const auditors = await api<WorkspaceSummary>(base, tokenOf("dev-auditor"), "POST", "/api/workspaces", {});
  assert.equal(auditors.status, 201);
  assert.equal(auditors.body.owner, "user:dev-auditor");
});

test("in the web app, a non-member's inbox lacks the workspace and its action page says who can add them; once the owner does, the write shows up in their open inbox", async () => {
  const { ws, action } = await adminsWorkspace();
  browser = await launchBrowser();
  const row = `[data-testid="action-row"][data-workspace="${ws}"][data-action-id="${action}"]`;
  const detail = await openApp(browser, base, tokenOf("dev-approver"), `/ws/${ws}/actions/${action}`);
  const banner = await detail.waitForSelector('[data-testid="error"]');
  assert.match(
    (await banner.textContent()) ?? "",
    new RegExp(
      `^You are not a member of this workspace\\. dev-approver is not a member of workspace ${ws}: .*ask its owner, user:dev-admin, to add you`,
    ),
  );
  await detail.waitForSelector('[data-testid="no-access"]');
  assert.equal(await detail.locator("text=Loading action").count(), 0, "not left saying it is loading");
  await detail.screenshot({ path: join(SCREENSHOTS, "not-a-member.png") });
  await detail.context().close();

  // A write in a workspace the approver does reach: once its row shows, the inbox has been read.
  const shared = await h.workspace("mcp://memory");
  const control = returned<number>(await h.exec(shared, oneWrite));
  const inbox = await openApp(browser, base, tokenOf("dev-approver"));
  await inbox.waitForSelector(
    `[data-testid="action-row"][data-workspace="${shared}"][data-action-id="${control}"]`,
  );
  assert.equal(await inbox.locator(row).count(), 0, "not in the inbox before being added");
  const added = await api(base, tokenOf("dev-admin"), "POST", `/api/workspaces/${ws}/members`, {
    member: "user:dev-approver",
  });
  assert.equal(added.status, 200);
  await inbox.waitForSelector(row, { timeout: 60_000 });
  await inbox.context().close();
});

/** Runs the CLI as a process in the harness's data dir, as if `gatehouse dev` ran there; never throws on exit 1. */
async function gatehouse(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  const root = resolve(import.meta.dirname, "../..");
  const env: NodeJS.ProcessEnv = { ...process.env, GATEHOUSE_DATA_DIR: h.dir, GATEHOUSE_USER: "carol" };
  delete env.GATEHOUSE_KERNEL_ADDRESS;
  delete env.GATEHOUSE_APPROVAL_ADDRESS;
  try {
    const { stdout, stderr } = await promisify(execFile)(
      process.execPath,
      ["--no-node-snapshot", "--import", "tsx", join(root, "apps/cli/src/main.ts"), ...args],
      { cwd: root, env, timeout: 120_000 },
    );
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code?: number; stdout?: string; stderr?: string };
    if (typeof e.code !== "number") throw err;
    return { code: e.code, stdout: e.stdout ?? "", stderr: e.stderr ?? "" };
  }
}

test("gatehouse workspace create says who owns a workspace made without --owner and that no dev sign-in person reaches it; members add lets one in, members remove takes them out", async () => {
  writeDevFile(h.dir, h.stack.addresses);
  const made = await gatehouse("workspace", "create", "--name", "carols");
  assert.equal(made.code, 0, made.stderr);
  const ws = made.stdout.trim();
  assert.match(ws, /^w[0-9a-f]{10}$/, "stdout is the id alone, for scripts");
  assert.match(
    made.stderr,
    new RegExp(
      `workspace ${ws} is owned by user:carol \\(no --owner: the default is user:\\$GATEHOUSE_USER, else user:\\$USER\\); members: none`,
    ),
  );
  assert.match(
    made.stderr,
    new RegExp(
      `none of gatehouse dev's sign-in people \\(dev-approver, dev-auditor, dev-admin\\) reach workspace ${ws} in the web app; add one with \`gatehouse members add ${ws} user:dev-approver\``,
    ),
  );
  const refused = await api(base, tokenOf("dev-approver"), "GET", `/api/workspaces/${ws}/log`);
  assert.equal(refused.status, 403);

  const added = await gatehouse("members", "add", ws, "dev-approver");
  assert.equal(added.code, 0, added.stderr);
  assert.equal(
    added.stdout.trim(),
    `added user:dev-approver to ${ws}: owner user:carol; members user:dev-approver`,
  );
  const listed = JSON.parse((await gatehouse("--json", "members", ws)).stdout);
  assert.deepEqual(listed, { id: ws, name: "carols", owner: "user:carol", members: ["user:dev-approver"] });
  const reached = await api(base, tokenOf("dev-approver"), "GET", `/api/workspaces/${ws}/log`);
  assert.equal(reached.status, 200, "the added member reads it through the gateway");

  const named = JSON.parse(
    (await gatehouse("--json", "workspace", "create", "--owner", "user:dev-admin", "--member", "dev-auditor"))
      .stdout,
  );
  assert.equal(named.owner, "user:dev-admin");
  assert.deepEqual(named.members, ["user:dev-auditor"]);
  assert.deepEqual(named.notes, [], "nothing to warn about");
  const auditors = JSON.parse(
    (await gatehouse("--json", "workspace", "list", "--person", "user:dev-auditor")).stdout,
  );
  const ids = auditors.map((w: { id: string }) => w.id);
  assert.ok(ids.includes(named.id) && !ids.includes(ws));

  const bad = await gatehouse("members", "add", ws, "carol smith");
  assert.equal(bad.code, 1);
  assert.match(bad.stderr, /<person> must name a person as "user:<subject>"/);
  const badOwner = await gatehouse("workspace", "create", "--owner", "a b");
  assert.equal(badOwner.code, 1);
  assert.match(
    badOwner.stderr,
    /--owner must name a person as "user:<subject>".*e\.g\. --owner user:dev-approver/,
  );
  const twice = await gatehouse("members", "add", ws, "user:dev-approver");
  assert.equal(twice.code, 1);
  assert.match(twice.stderr, /user:dev-approver is already a member of workspace/);
  const removed = await gatehouse("members", "remove", ws, "user:dev-approver");
  assert.equal(removed.code, 0, removed.stderr);
  assert.equal(removed.stdout.trim(), `removed user:dev-approver from ${ws}: owner user:carol; members none`);
  const shut = await api(base, tokenOf("dev-approver"), "GET", `/api/workspaces/${ws}/log`);
  assert.equal(shut.status, 403, "the removed member is refused again");
});
