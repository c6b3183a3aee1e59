/**
 * What approvers see must be what applies (issue 11): agent-supplied values holding direction
 * controls or invisible characters are shown as marked ⟨U+202E⟩ tokens in the web app (Debian's
 * Chromium via playwright-core) and in the CLI's tables, the description says which value holds
 * them, and the bytes that apply stay the original ones. Against the dev stack with the real
 * filesystem MCP server from npm. Titles keep every script (issue 33): a git commit whose subject
 * holds `Ünïcødé`, `日本語`, an RLO and a zero-width space shows them verbatim, the two invisible
 * characters as tokens, in the inbox, the review page, the detail heading and the CLI's tables.
 */
import assert from "node:assert/strict";
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import type { ActionDetail } from "@gatehouse/gateway-contract";
import { showInvisible } from "@gatehouse/gateway-contract/invisible";
import { ActionSubmitted, Delivery } from "@gatehouse/proto";
import type { Browser, Page } from "playwright-core";
import { launchBrowser, openApp, SCREENSHOTS } from "../support/browser.ts";
import { api } from "../support/gateway-client.ts";
import { git, makeBareRepo } from "../support/git-repo.ts";
import { type Harness, returned, startHarness, unary } from "../support/harness.ts";

const ROOT = join(import.meta.dirname, "../..");
const run = promisify(execFile);
/** A file name that reads "invoice…exe.txt"-like when the override is obeyed. */
const NAME = "invoice\u202Etxt.exe";
const CONTENT = "pay\u200Bpal";
/** A (faulty or hostile) gatekeeper's title that does not keep to a safe character set. */
const TITLE = `Write ${NAME}\u200B now\u2066`;

let h: Harness;
let browser: Browser;
let base: string;
const tokenOf = (subject: string) => h.stack.devTokens.find((t) => t.subject === subject)?.token ?? "";
const dirOf = `(await env.FILES.list_allowed_directories({})).content[0].text.split("\\n").find((l: string) => l.startsWith("/"))`;

before(async () => {
  assert.ok(existsSync(join(ROOT, "web/dist/index.html")), "web/dist is built (npm run build)");
  h = await startHarness();
  base = h.stack.addresses.gateway;
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await h?.close();
});

/** Appends an ActionSubmitted as a gatekeeper that does not sanitise its title would; returns its id. */
async function appendRaw(ws: string, title: string, description: string): Promise<number> {
  const revision = await h.stack.store.streamRevision(`workspace-${ws}`);
  const appended = await h.stack.store.append(
    `workspace-${ws}`,
    [
      {
        type: "ActionSubmitted",
        data: ActionSubmitted.toJSON(
          ActionSubmitted.fromPartial({
            binding: "FILES",
            localId: "~raw",
            description: {
              title,
              description,
              descriptionIsComplete: true,
              delivery: Delivery.DELIVERY_SIMULATE,
            },
            payloadJson: "{}",
            executionId: "faulty-gatekeeper",
          }),
        ),
        metadata: { actor: "test", caller: { kind: "agent", id: "x" } },
      },
    ],
    revision,
  );
  return appended.nextExpectedRevision;
}

/** The text of the first element matching `selector` once it shows `expected` (generous deadline). */
async function textOnce(page: Page, selector: string, expected: string): Promise<string> {
  await page
    .waitForFunction(
      ([s, t]) => document.querySelector(s)?.textContent?.includes(t),
      [selector, expected] as const,
      { timeout: 30_000 },
    )
    .catch(() => undefined);
  return (await page.locator(selector).first().textContent()) ?? "";
}

/** Runs the CLI against the shared stack; its stdout. */
async function cli(...args: string[]): Promise<string> {
  const env = {
    ...process.env,
    GATEHOUSE_KERNEL_ADDRESS: h.stack.addresses.kernel,
    GATEHOUSE_APPROVAL_ADDRESS: h.stack.addresses.approval,
  };
  const { stdout } = await run(
    process.execPath,
    ["--no-node-snapshot", "--import", "tsx", join(ROOT, "apps/cli/src/main.ts"), ...args],
    { cwd: ROOT, env, timeout: 120_000 },
  );
  return stdout;
}

test("a write whose arguments hold U+202E and a zero-width space: the detail shows them as marked tokens and says which values hold them; approved, the file gets the original bytes", async () => {
  const ws = await h.workspace("mcp://files");
  const { actionId, dir } = returned<{ actionId: number; dir: string }>(
    await h.exec(
      ws,
      `export default async (env: any) => {
        const dir = ${dirOf};
        const r = await env.FILES.write_file({ path: dir + "/" + ${JSON.stringify(NAME)}, content: ${JSON.stringify(CONTENT)} });
        return { actionId: r.actionId, dir };
      }`,
    ),
  );
  const args = { path: `${dir}/${NAME}`, content: CONTENT };

  const page = await openApp(browser, base, tokenOf("dev-approver"), `/ws/${ws}/actions/${actionId}`);
  const description = '[data-testid="description"]';
  const text = await textOnce(page, description, "Arguments");
  assert.ok(!/[\u202E\u200B]/u.test(text), "no raw direction control or zero-width space is rendered");
  // The fenced arguments render exactly as their escaped form.
  const json = await page.locator(`${description} code.language-json`).textContent();
  assert.equal(json?.replace(/\n$/, ""), showInvisible(JSON.stringify(args, null, 2)));
  assert.ok(json?.includes(`"path": "${dir}/invoice⟨U+202E⟩txt.exe"`), json ?? "");
  // The description's trusted text names the values and what they hold.
  assert.match(
    text,
    /Arguments path contains invisible or direction-control characters: U\+202E RIGHT-TO-LEFT OVERRIDE/,
  );
  assert.match(
    text,
    /Arguments content contains invisible or direction-control characters: U\+200B ZERO WIDTH SPACE/,
  );
  // Each token is a marked element naming the character.
  const marks = page.locator(`${description} code.language-json .invisible-char`);
  assert.equal(await marks.count(), 2);
  assert.equal(await marks.first().textContent(), "⟨U+202E⟩");
  assert.match((await marks.first().getAttribute("title")) ?? "", /^U\+202E RIGHT-TO-LEFT OVERRIDE/);
  // What Chromium lays out (innerText) reads as the escaped form, not as "invoice…exe.txt".
  // biome-ignore lint/performance/useDomNodeTextContent: innerText is the laid-out text a person reads, the point here
  const inner = await page.locator(`${description} code.language-json`).innerText();
  assert.ok(inner.includes(`${dir}/invoice⟨U+202E⟩txt.exe`), inner);

  // The API (machine output) keeps the exact bytes of the description.
  const detail = await api<ActionDetail>(
    base,
    tokenOf("dev-approver"),
    "GET",
    `/api/workspaces/${ws}/actions/${actionId}`,
  );
  assert.ok(
    detail.body.action.description.includes(`"path": "${dir}/${NAME}"`),
    "the API returns the original bytes",
  );

  await page.screenshot({ path: join(SCREENSHOTS, "detail-invisible-characters-1280.png"), fullPage: true });
  await page.click('[data-testid="approve"]');
  await page.waitForSelector('[data-testid="status"]:has-text("applied")', { timeout: 60_000 });
  assert.equal(
    readFileSync(join(dir, NAME), "utf8"),
    CONTENT,
    "the file that applied has the original name and bytes",
  );
  await page.context().close();
});

test("a title holding invisible characters shows as its escaped form in the inbox, the detail and the log; the CLI table shows tokens, --json the bytes", async () => {
  const ws = await h.workspace("mcp://files");
  const id = await appendRaw(ws, TITLE, `Reason: see [${NAME}](http://x.test/${NAME}) and \`${CONTENT}\`.`);
  const shown = showInvisible(TITLE);
  assert.equal(shown, "Write invoice⟨U+202E⟩txt.exe⟨U+200B⟩ now⟨U+2066⟩");

  const page = await openApp(browser, base, tokenOf("dev-approver"));
  const rowTitle = `[data-testid="action-row"][data-workspace="${ws}"][data-action-id="${id}"] .row-title`;
  assert.equal(await textOnce(page, rowTitle, "Write"), shown, "inbox row title");
  // biome-ignore lint/performance/useDomNodeTextContent: innerText is the laid-out text a person reads, the point here
  assert.equal(await page.locator(rowTitle).innerText(), shown, "inbox row title as laid out");
  assert.equal(await page.locator(`${rowTitle} .invisible-char`).count(), 3);

  await page.evaluate((route) => {
    window.location.hash = route;
  }, `#/ws/${ws}/actions/${id}`);
  assert.equal(await textOnce(page, '[data-testid="title"]', "Write"), shown, "detail title");
  const description = await textOnce(page, '[data-testid="description"]', "Reason");
  assert.ok(
    description.includes(`see ${showInvisible(NAME)} http://x.test/invoice`),
    `link text shown escaped: ${description}`,
  );
  assert.ok(!/[\u202E\u200B]/u.test(description), `nothing raw in the link URL either: ${description}`);
  assert.ok(description.includes("pay⟨U+200B⟩pal"), "code span shown escaped");

  await page.evaluate((route) => {
    window.location.hash = route;
  }, `#/ws/${ws}/log`);
  const logTitle = `[data-testid="log-entry"][data-id="${id}"] .row-title`;
  assert.equal(await textOnce(page, logTitle, "Write"), shown, "log entry title");
  await page.context().close();

  const table = await cli("actions", ws);
  assert.ok(table.includes(shown), table);
  assert.ok(!/[\u202E\u200B\u2066]/u.test(table), "no raw invisible character reaches the terminal");
  const json = JSON.parse(await cli("--json", "actions", ws)) as Array<{
    id: number;
    description?: { title?: string };
  }>;
  const record = json.find((a) => a.id === id);
  assert.equal(record?.description?.title, TITLE, "--json keeps the exact bytes");
});

test("a commit titled with Ünïcødé, 日本語, an RLO and a zero-width space: verbatim with the two invisible characters as tokens in the inbox, the review page, the detail heading, `gatehouse actions` and `log`", async () => {
  const subject = "Ünïcødé 日本語 \u202Etxt.exe\u200B";
  const shown = "Ünïcødé 日本語 ⟨U+202E⟩txt.exe⟨U+200B⟩";
  const title = `Commit to main: ${shown}`;
  const bare = makeBareRepo(h.dir, join(h.dir, "repos", "titles.git"), { "docs/readme.md": "hello\n" });
  const ws = await h.workspace(`git+file://${bare}`);
  const result = await h.exec(
    ws,
    `export default async (env: any) => {
      await env.REPO.commit({ branch: "main", message: ${JSON.stringify(`${subject}\n\nbody`)}, changes: [{ path: "docs/日本語.md", content: "こんにちは\\n" }] });
      return true;
    }`,
  );
  returned(result);
  const pending = await unary(h.decisions, h.decisions.listActions, { workspaceId: ws, pendingOnly: true });
  const action = pending.actions[0];
  assert.ok(action, "the commit waits for review");
  const id = action.id;
  assert.equal(action.description?.title, title, "the gatekeeper's title keeps every script");
  const raw = /[\u202E\u200B]/u;

  const page = await openApp(browser, base, tokenOf("dev-approver"));
  const row = `[data-testid="action-row"][data-workspace="${ws}"][data-action-id="${id}"] .row-title`;
  const inbox = await textOnce(page, row, "Ünïcødé");
  assert.ok(inbox.includes(shown), `inbox row: ${inbox}`);
  assert.ok(inbox.includes(title), `inbox row shows the title: ${inbox}`);
  assert.ok(!raw.test(inbox), "no raw RLO or zero-width space in the inbox");
  // biome-ignore lint/performance/useDomNodeTextContent: innerText is the laid-out text a person reads, the point here
  assert.ok((await page.locator(row).innerText()).includes(shown), "inbox row as laid out");

  await page.evaluate(
    (route) => {
      window.location.hash = route;
    },
    `#/ws/${ws}/review?execution=${encodeURIComponent(result.executionId)}`,
  );
  const summary = await textOnce(page, `[data-review-row="${id}"] .review-summary`, "Ünïcødé");
  assert.ok(summary.includes(`commit 1 file to main: "${shown}"`), `review page: ${summary}`);
  assert.ok(!raw.test(summary), "no raw RLO or zero-width space on the review page");

  await page.evaluate((route) => {
    window.location.hash = route;
  }, `#/ws/${ws}/actions/${id}`);
  assert.equal(await textOnce(page, '[data-testid="title"]', "Ünïcødé"), title, "detail heading");
  const description = await textOnce(page, '[data-testid="description"]', "Ünïcødé");
  assert.ok(!raw.test(description), "no raw RLO or zero-width space in the description");
  await page.screenshot({ path: join(SCREENSHOTS, "detail-title-every-script-1280.png") });
  await page.context().close();

  const table = await cli("actions", ws);
  assert.ok(table.includes(`commit 1 file to main: "${shown}"`), table);
  const log = await cli("log", ws);
  assert.ok(log.includes(title), log);
  for (const out of [table, log])
    assert.ok(!raw.test(out), "no raw invisible character reaches the terminal");

  await unary(h.decisions, h.decisions.approve, {
    workspaceId: ws,
    actionId: id,
    decidedBy: "user:dev-approver",
    includeDependencies: false,
    descriptionDigests: {},
  });
  assert.equal(
    git(bare, "log", "-1", "--format=%s", "main"),
    subject,
    "the commit applied has the original bytes",
  );
});
