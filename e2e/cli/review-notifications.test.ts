/**
 * Review notifications over the real stack (issue 32, "Tell people a batch is waiting"): the dev stack
 * with the real memory MCP server, a real SMTP server (aiosmtpd, installed by scripts/setup.sh into the
 * Python MCP venv) and a real HTTP receiver for the registered webhooks. A person sets their
 * preferences through the gateway (GET/PUT /api/me/notifications); an execution that stages several
 * writes yields exactly one email and one webhook post, each with the link to that turn's review page;
 * a second turn yields a second; after the stack restarts on the same data, nothing is sent again. The
 * emailed link, opened in Chromium, asks for a sign-in and then shows that turn's review page. A turn of
 * the built-in agent (driven by the FAKE OpenAI-compatible model of @gatehouse/agent-core/testing, as
 * no real model can be reached here) whose step stages two writes, which wait for people, is one
 * notification as the turn suspends, linking `?turn=`.
 */
import assert from "node:assert/strict";
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { homedir, tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { type FakeOpenAiServer, startFakeOpenAiServer } from "@gatehouse/agent-core/testing";
import { type DevStack, startDevStack } from "@gatehouse/dev-stack";
import type { ApiError, NotificationPreferencesResponse } from "@gatehouse/gateway-contract";
import { REVIEW_NOTIFICATIONS_STREAM } from "@gatehouse/kernel";
import { loadNotifyConfig, type NotifyConfig } from "@gatehouse/notify";
import { KernelClient } from "@gatehouse/proto";
import { freePort, waitUntil } from "@gatehouse/service-kit";
import { credentials } from "@grpc/grpc-js";
import type { Browser } from "playwright-core";
import { launchBrowser } from "../support/browser.ts";
import { api } from "../support/gateway-client.ts";
import { DEV_MEMBERS, DEV_OWNER, unary } from "../support/harness.ts";

const python = join(
  process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"),
  "gatehouse",
  "python-mcp",
  "bin",
  "python",
);
const SMTP_SINK = join(import.meta.dirname, "../../packages/notify/test/fixtures/smtp_sink.py");

const dir = mkdtempSync(join(tmpdir(), "gatehouse-notify-"));
const mailbox = join(dir, "mail.jsonl");
let smtp: ChildProcess;
let receiver: Server;
const posts: { path: string; body: Record<string, unknown> }[] = [];
let notify: NotifyConfig;
let gatewayPort = 0;
let stack: DevStack;
let kernel: KernelClient;
let browser: Browser | undefined;
let fake: FakeOpenAiServer;

interface Mail {
  rcpt_tos: string[];
  data: string;
}

function mails(): Mail[] {
  try {
    return readFileSync(mailbox, "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Mail);
  } catch {
    return [];
  }
}

/** The mail's text with quoted-printable soft breaks and =XX escapes undone. */
function plain(mail: Mail): string {
  return mail.data
    .replace(/=\r?\n/g, "")
    .replace(/=([0-9A-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

async function start(): Promise<void> {
  stack = await startDevStack({
    dataDir: dir,
    ports: { gateway: gatewayPort },
    notify,
    agent: {
      deployment: { provider: "openai-compatible", model: "fake-coder", baseUrl: fake.baseUrl },
      workspaces: new Map(),
      limits: { maxSteps: 5, maxTokens: 100_000, maxResultBytes: 16_384, modelAttempts: 3 },
    },
  });
  kernel = new KernelClient(stack.addresses.kernel, credentials.createInsecure());
}

async function stop(): Promise<void> {
  kernel?.close();
  await stack?.close();
}

const tokenOf = (subject: string) => stack.devTokens.find((t) => t.subject === subject)?.token ?? "";

/** ReviewNotificationSent events recorded so far. */
async function recorded(): Promise<{ executionId: string; pending: number; emailed: number }[]> {
  const events = await stack.store.readStream(REVIEW_NOTIFICATIONS_STREAM).catch(() => []);
  return events.map((e) => e.data as { executionId: string; pending: number; emailed: number });
}

/** dev-approver asks for email at `email` and posts to `webhooks`, for every workspace. */
async function prefer(email: string, webhooks: string[]): Promise<void> {
  const res = await api(stack.addresses.gateway, tokenOf("dev-approver"), "PUT", "/api/me/notifications", {
    email,
    scopes: [{ workspace: "*", email: true, webhooks }],
  });
  assert.equal(res.status, 200, JSON.stringify(res.body));
}

/** Runs a snippet as an MCP agent would; returns its execution id. */
async function stageWrites(ws: string, names: string[]): Promise<string> {
  const entities = JSON.stringify(names.map((name) => ({ name, entityType: "person", observations: [] })));
  const code = `export default async (env: any) => {
    for (const e of ${entities}) await env.MEMORY.create_entities({ entities: [e] });
  }`;
  const r = await unary(kernel, kernel.executeCode, {
    workspaceId: ws,
    code,
    caller: { kind: "agent", id: "chat-1" },
    limits: { wallTimeMs: 60_000, heapMb: 0, outputBytes: 0 },
    executionId: "",
  });
  assert.ok(r.ok, `snippet failed: ${r.error?.message}`);
  assert.equal(r.submitted.length, names.length);
  return r.executionId;
}

before(async () => {
  fake = await startFakeOpenAiServer();
  const smtpPort = await freePort();
  smtp = spawn(python, [SMTP_SINK, mailbox, String(smtpPort)], { stdio: ["pipe", "pipe", "inherit"] });
  await new Promise<void>((resolve, reject) => {
    smtp.once("error", reject);
    smtp.once("exit", (code) =>
      reject(new Error(`the SMTP sink exited (${code}); run scripts/setup.sh for aiosmtpd`)),
    );
    smtp.stdout?.once("data", () => resolve());
  });
  receiver = createServer((req, res) => {
    let body = "";
    req.on("data", (c) => (body += c));
    req.on("end", () => {
      posts.push({ path: req.url ?? "", body: JSON.parse(body) });
      res.end("ok");
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  const hookPort = (receiver.address() as { port: number }).port;
  const registry = join(dir, "webhooks.yaml");
  writeFileSync(
    registry,
    `ops-json: {url: "http://127.0.0.1:${hookPort}/ops", format: json}\n` +
      `team-slack: {url: "http://127.0.0.1:${hookPort}/slack", format: slack}\n`,
  );
  gatewayPort = await freePort();
  notify = loadNotifyConfig({
    smtpUrl: `smtp://127.0.0.1:${smtpPort}`,
    from: "gatehouse@example.test",
    publicUrl: `http://127.0.0.1:${gatewayPort}`,
    webhooksFile: registry,
    timeoutMs: 5000,
  });
  await start();
});

after(async () => {
  await browser?.close();
  await stop();
  smtp?.stdin?.end();
  receiver?.close();
  await fake?.close();
  rmSync(dir, { recursive: true, force: true });
});

test("preferences: a person reads and sets their own; bad input is refused naming the field", async () => {
  const base = stack.addresses.gateway;
  const token = tokenOf("dev-approver");
  const empty = await api<NotificationPreferencesResponse>(base, token, "GET", "/api/me/notifications");
  assert.equal(empty.status, 200);
  assert.deepEqual(empty.body, {
    person: "user:dev-approver",
    email: "",
    scopes: [],
    emailAvailable: true,
    webhooksAvailable: ["ops-json", "team-slack"],
  });

  const unknownHook = await api<ApiError>(base, token, "PUT", "/api/me/notifications", {
    email: "ana@example.test",
    scopes: [{ workspace: "*", email: true, webhooks: ["https://evil.example/hook"] }],
  });
  assert.equal(unknownHook.status, 400);
  assert.match(unknownHook.body.error.message, /scopes\.0\.webhooks: .* is not a registered webhook/);
  assert.ok(!unknownHook.body.error.message.includes("127.0.0.1"), "registered URLs are never shown");

  const badEmail = await api<ApiError>(base, token, "PUT", "/api/me/notifications", {
    email: "not an address",
    scopes: [],
  });
  assert.equal(badEmail.status, 400);
  assert.match(badEmail.body.error.message, /email must be an email address/);

  const noAddress = await api<ApiError>(base, token, "PUT", "/api/me/notifications", {
    scopes: [{ workspace: "*", email: true, webhooks: [] }],
  });
  assert.equal(noAddress.status, 400);
  assert.match(noAddress.body.error.message, /scopes\.0\.email: email is on but no address is set/);

  const unauthenticated = await api<ApiError>(base, undefined, "GET", "/api/me/notifications");
  assert.equal(unauthenticated.status, 401);

  const set = await api<NotificationPreferencesResponse>(base, token, "PUT", "/api/me/notifications", {
    email: "ana@example.test",
    scopes: [{ workspace: "*", email: true, webhooks: ["ops-json"] }],
  });
  assert.equal(set.status, 200, JSON.stringify(set.body));
  const read = await api<NotificationPreferencesResponse>(base, token, "GET", "/api/me/notifications");
  assert.equal(read.body.email, "ana@example.test");
  assert.deepEqual(read.body.scopes, [{ workspace: "*", email: true, webhooks: ["ops-json"] }]);
  // Another person's preferences are theirs: the auditor still has none.
  const other = await api<NotificationPreferencesResponse>(
    base,
    tokenOf("dev-auditor"),
    "GET",
    "/api/me/notifications",
  );
  assert.deepEqual(other.body.scopes, []);
});

test("one turn staging several writes is one email and one post linking its review page; a second turn a second; a restart resends nothing", async () => {
  await prefer("ana@example.test", ["ops-json"]);
  const ws = (
    await unary(kernel, kernel.createWorkspace, { name: "notify", owner: DEV_OWNER, members: DEV_MEMBERS })
  ).id;
  await unary(kernel, kernel.introduceResource, { workspaceId: ws, url: "mcp://memory", name: "" });
  const base = `http://127.0.0.1:${gatewayPort}`;
  const linkOf = (execution: string) => `${base}/#/ws/${ws}/review?execution=${execution}`;

  const first = await stageWrites(ws, ["Ada", "Bob", "Cy"]);
  await waitUntil("the first notification recorded", async () =>
    (await recorded()).length === 1 ? true : undefined,
  );
  const mail = await waitUntil("the first email", () => (mails().length >= 1 ? mails()[0] : undefined));
  assert.deepEqual(mail.rcpt_tos, ["ana@example.test"]);
  assert.match(mail.data, new RegExp(`^Subject: 3 writes wait for your review in ${ws}$`, "m"));
  assert.ok(plain(mail).includes(linkOf(first)), plain(mail));
  assert.equal(posts.length, 1);
  assert.equal(posts[0]?.path, "/ops");
  assert.equal(posts[0]?.body.reviewUrl, linkOf(first));
  assert.equal(posts[0]?.body.pending, 3);
  assert.equal((posts[0]?.body.summaries as string[] | undefined)?.length, 3);
  assert.equal(mails().length, 1, "one turn, one email");

  const second = await stageWrites(ws, ["Dee", "Eve"]);
  await waitUntil("the second notification recorded", async () =>
    (await recorded()).length === 2 ? true : undefined,
  );
  await waitUntil("the second email", () => (mails().length >= 2 ? true : undefined));
  assert.equal(mails().length, 2);
  assert.ok(plain(mails()[1] as Mail).includes(linkOf(second)));
  assert.equal(posts.length, 2);
  assert.equal(posts[1]?.body.reviewUrl, linkOf(second));
  assert.equal(posts[1]?.body.pending, 2);

  // The emailed link opens the web app at the public URL: nothing shows before signing in, then the
  // review page of that turn with its three writes.
  const inbox = await api(base, undefined, "GET", "/api/inbox");
  assert.equal(inbox.status, 401);
  const link = /https?:\/\/\S+review\?execution=[\w-]+/.exec(plain(mail))?.[0] ?? "";
  assert.equal(link, linkOf(first));
  browser = await launchBrowser();
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  await page.goto(link);
  await page.waitForSelector('[data-testid="token-input"]');
  assert.equal(await page.locator('[data-testid="review-page"]').count(), 0, "no review before sign-in");
  await page.fill('[data-testid="token-input"]', tokenOf("dev-approver"));
  await page.click('[data-testid="sign-in"]');
  await page.waitForSelector('[data-testid="review-page"]');
  assert.equal(new URL(page.url()).hash, `#/ws/${ws}/review?execution=${first}`);
  await page.waitForFunction(
    () => /Ada/.test(document.body.textContent ?? "") && /Cy/.test(document.body.textContent ?? ""),
  );
  await page.context().close();

  // Restart the whole stack on the same data: the notifier resumes after its last record.
  await stop();
  await start();
  const third = await stageWrites(ws, ["Fay"]);
  await waitUntil("the third notification recorded", async () =>
    (await recorded()).length === 3 ? true : undefined,
  );
  await waitUntil("the third email", () => (mails().length >= 3 ? true : undefined));
  // Delivered in order: anything resent after the restart would have come before the third.
  assert.equal(mails().length, 3);
  assert.equal(posts.length, 3);
  assert.ok(plain(mails()[2] as Mail).includes(linkOf(third)));
  assert.deepEqual(
    (await recorded()).map((r) => [r.executionId, r.pending, r.emailed]),
    [
      [first, 3, 1],
      [second, 2, 1],
      [third, 1, 1],
    ],
  );
});

test("an execution that wrote nothing sends nothing", async () => {
  await prefer("ana@example.test", ["ops-json"]);
  const ws = (
    await unary(kernel, kernel.createWorkspace, { name: "quiet", owner: DEV_OWNER, members: DEV_MEMBERS })
  ).id;
  await unary(kernel, kernel.introduceResource, { workspaceId: ws, url: "mcp://memory", name: "" });
  const before = { mails: mails().length, posts: posts.length, recorded: (await recorded()).length };
  const r = await unary(kernel, kernel.executeCode, {
    workspaceId: ws,
    code: "export default async (env: any) => (await env.MEMORY.read_graph({})).content.length",
    caller: { kind: "agent", id: "chat-1" },
    limits: { wallTimeMs: 60_000, heapMb: 0, outputBytes: 0 },
    executionId: "",
  });
  assert.ok(r.ok);
  // A later turn with a write is the sync point: the notifier handles events in order.
  const marker = await stageWrites(ws, ["Gus"]);
  await waitUntil("the marker's notification", async () =>
    (await recorded()).length === before.recorded + 1 ? true : undefined,
  );
  assert.equal((await recorded()).at(-1)?.executionId, marker);
  assert.equal(mails().length, before.mails + 1);
  assert.equal(posts.length, before.posts + 1);
});

test("the Notifications page sets a person's preferences; a refusal is shown next to Save", async () => {
  browser ??= await launchBrowser();
  const base = stack.addresses.gateway;
  const token = tokenOf("dev-auditor");
  const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
  await page.goto(`${base}/#token=${encodeURIComponent(token)}`);
  await page.click('[data-testid="notifications-link"]');
  await page.waitForSelector('[data-testid="notifications-page"]');
  await page.fill('[data-testid="notify-email"]', "not an address");
  await page.check('[data-testid="notify-scope-email"]');
  await page.click('[data-testid="notify-save"]');
  await page.waitForSelector('[data-testid="notify-status"][role="alert"]');
  assert.match(
    (await page.textContent('[data-testid="notify-status"]')) ?? "",
    /email must be an email address/,
  );

  await page.fill('[data-testid="notify-email"]', "bo@example.test");
  await page.check('[data-testid="notify-hook-team-slack"]');
  await page.click('[data-testid="notify-save"]');
  await page.waitForSelector('[data-testid="notify-status"]:has-text("Saved.")');
  const stored = await api<NotificationPreferencesResponse>(base, token, "GET", "/api/me/notifications");
  assert.equal(stored.body.email, "bo@example.test");
  assert.deepEqual(stored.body.scopes, [{ workspace: "*", email: true, webhooks: ["team-slack"] }]);
  await page.context().close();
  // Back to none, so the other tests' counts are unaffected by the auditor.
  await api(base, token, "PUT", "/api/me/notifications", { scopes: [] });
});

test("a built-in agent turn is one notification linking ?turn=: its step's writes wait for people, so it is sent as the turn suspends", async () => {
  await prefer("ana@example.test", ["ops-json"]);
  const ws = (
    await unary(kernel, kernel.createWorkspace, { name: "agent", owner: DEV_OWNER, members: DEV_MEMBERS })
  ).id;
  await unary(kernel, kernel.introduceResource, { workspaceId: ws, url: "mcp://memory", name: "" });
  const before = { mails: mails().length, posts: posts.length, recorded: (await recorded()).length };
  const code = `export default async (env: any) => {
  for (const name of ["Hal", "Ida"])
    await env.MEMORY.create_entities({ entities: [{ name, entityType: "person", observations: [] }] });
}`;
  fake.push(
    { kind: "tool_calls", calls: [{ name: "executeCode", arguments: JSON.stringify({ code }) }] },
    { kind: "text", text: "Added Hal and Ida." },
  );
  const turnId = "turn-notify-1";
  await stack.agent.startChat({ workspaceId: ws, chatId: "chat-notify", person: DEV_OWNER });
  await stack.agent.sendMessage({
    workspaceId: ws,
    chatId: "chat-notify",
    turnId,
    text: "Add Hal and Ida",
    person: DEV_OWNER,
  });
  await waitUntil(
    "the turn's notification",
    async () => ((await recorded()).length === before.recorded + 1 ? true : undefined),
    { timeoutMs: 240_000 },
  );
  const last = (await recorded()).at(-1) as unknown as {
    turnId: string;
    executionId: string;
    pending: number;
  };
  assert.equal(last.turnId, turnId);
  assert.ok(!last.executionId, "a turn, not one of its executions");
  assert.equal(last.pending, 2);
  const events = await stack.store.readStream(`workspace-${ws}`);
  assert.ok(
    events.some((e) => e.type === "TurnSuspended"),
    "the turn waits for people",
  );
  await waitUntil("the email", () => (mails().length === before.mails + 1 ? true : undefined));
  assert.ok(plain(mails().at(-1) as Mail).includes(`/#/ws/${ws}/review?turn=${turnId}`));
  assert.equal(posts.length, before.posts + 1, "one post for the turn, not one per write");
  assert.equal(
    posts.at(-1)?.body.reviewUrl,
    `http://127.0.0.1:${gatewayPort}/#/ws/${ws}/review?turn=${turnId}`,
  );
  assert.equal(posts.at(-1)?.body.pending, 2);
});
