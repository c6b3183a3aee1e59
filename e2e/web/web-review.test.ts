/**
 * Acceptance of the review page (issue 32) in Chromium over the dev stack with the real MCP memory
 * and filesystem servers: one execution's mixed writes are reviewed like a pull request — risky
 * writes pinned first with reasons, holding an entity shows the relations that depend on it and
 * holds them on request, one batch carries every included action's description digest and exactly
 * those are applied; a batch with another action's digest is refused naming the action, nothing
 * approved; a group longer than the window draws only its rows near the screen and its batch still
 * names every included row; before approval, a file overwrite shows its diff against the current
 * file and a write into a missing directory its pre-flight warning. Prints how many screens the page
 * takes at 1280x800 and 390x844.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { Action, ActionDetail, ApiError } from "@gatehouse/gateway-contract";
import { waitUntil } from "@gatehouse/service-kit";
import type { Browser, Page } from "playwright-core";
import { launchBrowser, openApp, SCREENSHOTS } from "../support/browser.ts";
import { api } from "../support/gateway-client.ts";
import { type Harness, returned, startHarness } from "../support/harness.ts";

let h: Harness;
let browser: Browser;
let base: string;
const tokenOf = (subject: string) => h.stack.devTokens.find((t) => t.subject === subject)?.token ?? "";

before(async () => {
  assert.ok(existsSync(join(import.meta.dirname, "../../web/dist/index.html")), "web/dist is built");
  h = await startHarness();
  base = h.stack.addresses.gateway;
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await h?.close();
});

interface TurnIds {
  alpha: number;
  beta: number;
  knows: number;
  likes: number;
  drop: number;
  notes: number;
  migration: number;
}

async function action(ws: string, id: number): Promise<Action> {
  const r = await api<ActionDetail>(
    base,
    tokenOf("dev-approver"),
    "GET",
    `/api/workspaces/${ws}/actions/${id}`,
  );
  assert.equal(r.status, 200, JSON.stringify(r.body));
  return r.body.action;
}

const screens = (page: Page) =>
  page.evaluate(() => Math.round((document.documentElement.scrollHeight / window.innerHeight) * 100) / 100);

const rowSel = (id: number) => `[data-review-row="${id}"]`;

test("reviewing one execution's mixed writes: risk first, hold with dependents, one digest-bound batch applies exactly the included", async (t) => {
  const ws = await h.workspace("mcp://memory", "mcp://files");
  const files = join(h.dir, "files");
  const result = await h.exec(
    ws,
    `export default async (env: any) => {
      const alpha = await env.MEMORY.create_entities({ entities: [{ name: "Alpha", entityType: "team", observations: ["builds"] }] });
      const beta = await env.MEMORY.create_entities({ entities: [{ name: "Beta", entityType: "team", observations: [] }] });
      const knows = await env.MEMORY.create_relations({ relations: [{ from: "Alpha", to: "Beta", relationType: "knows" }] }, { dependsOn: [alpha.actionId, beta.actionId] });
      const likes = await env.MEMORY.create_relations({ relations: [{ from: "Beta", to: "Alpha", relationType: "likes" }] }, { dependsOn: [alpha.actionId] });
      const drop = await env.MEMORY.delete_entities({ entityNames: ["Legacy"] });
      const notes = await env.FILES.write_file({ path: ${JSON.stringify(join(files, "notes.md"))}, content: "# Notes\\n\\nAlpha and Beta met.\\n" });
      const migration = await env.FILES.write_file({ path: ${JSON.stringify(join(files, "migration.md"))}, content: "# Migration\\n\\n\`\`\`sql\\nDROP TABLE customers;\\n\`\`\`\\n" });
      return { alpha: alpha.actionId, beta: beta.actionId, knows: knows.actionId, likes: likes.actionId, drop: drop.actionId, notes: notes.actionId, migration: migration.actionId };
    }`,
  );
  const ids = returned<TurnIds>(result);
  const route = `/ws/${ws}/review?execution=${encodeURIComponent(result.executionId)}`;

  // Screens at both sizes, before any decision.
  const phone = await openApp(browser, base, tokenOf("dev-approver"), route, { width: 390, height: 844 });
  await phone.waitForSelector(rowSel(ids.migration));
  const page = await openApp(browser, base, tokenOf("dev-approver"), route);
  await page.waitForSelector(rowSel(ids.migration));
  const desk = await screens(page);
  mkdirSync(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: join(SCREENSHOTS, "review-1280.png"), fullPage: true });
  await phone.screenshot({ path: join(SCREENSHOTS, "review-390.png"), fullPage: true });
  const mobile = await screens(phone);
  t.diagnostic(`review of 7 writes: ${desk} screens at 1280x800, ${mobile} screens at 390x844`);
  const phoneFirst = await phone.evaluate(
    (sel) => document.querySelector(`${sel} .review-summary`)?.getBoundingClientRect().top ?? -1,
    rowSel(ids.notes),
  );
  const phoneBox = await phone.evaluate(
    (sel) => document.querySelector(`${sel} input[type="checkbox"]`)?.getBoundingClientRect().top ?? -1,
    rowSel(ids.notes),
  );
  assert.ok(phoneFirst >= 0 && phoneFirst < phoneBox, "on a phone each card starts with its summary");
  await phone.context().close();

  // A row is one line until its description is asked for; the description then shows under it.
  assert.equal(await page.locator(`${rowSel(ids.beta)} .review-detail`).count(), 0, "no second line");
  await page.click(`${rowSel(ids.notes)} [data-testid="description-toggle"]`);
  const described = page.locator(`${rowSel(ids.notes)} [data-testid="review-description"]`);
  await described.waitFor();
  assert.ok(((await described.textContent()) ?? "").length > 0, "the description is shown");
  await page.click(`${rowSel(ids.notes)} [data-testid="description-toggle"]`);
  await described.waitFor({ state: "detached" });

  // Holding Alpha shows, in place, the relations that depend on it; "also hold" holds them.
  await page
    .locator(`${rowSel(ids.alpha)} input[type="checkbox"]`)
    .first()
    .uncheck();
  const offer = page.locator(`${rowSel(ids.alpha)} [data-testid="hold-offer"]`);
  await offer.waitFor();
  const offered = (await offer.textContent()) ?? "";
  assert.match(offered, new RegExp(`#${ids.knows}\\b`));
  assert.match(offered, new RegExp(`#${ids.likes}\\b`));
  const needs = (await page.locator(`${rowSel(ids.knows)} [data-testid="deps-offer"]`).textContent()) ?? "";
  assert.match(needs, new RegExp(`held #${ids.alpha}\\b`), "a dependent names the held action it needs");
  await offer.getByRole("button", { name: "Also hold its dependents" }).click();
  for (const id of [ids.alpha, ids.knows, ids.likes])
    assert.equal(await page.getAttribute(rowSel(id), "data-held"), "true", `#${id} is held`);

  // The DROP TABLE file is held too (x on it after moving there is the keyboard way; the box here).
  await page
    .locator(`${rowSel(ids.migration)} input[type="checkbox"]`)
    .first()
    .uncheck();

  const included = [ids.beta, ids.drop, ids.notes];
  const held = [ids.alpha, ids.knows, ids.likes, ids.migration];
  const sent = page.waitForRequest((r) => r.url().endsWith(`/api/workspaces/${ws}/approve-batch`));
  await page.click('[data-testid="review-approve"]');
  const body = (await sent).postDataJSON() as {
    actionIds: number[];
    descriptionDigests: Record<string, string>;
  };
  assert.deepEqual(
    [...body.actionIds].sort((a, b) => a - b),
    included,
  );
  for (const id of included) {
    const digest = body.descriptionDigests[String(id)];
    assert.ok(digest, `#${id} carries its digest`);
    assert.equal(digest, (await action(ws, id)).descriptionDigest);
  }
  await page.waitForSelector('[data-testid="review-status"]:has-text("Approved 3")');

  await waitUntil("the included writes are applied", async () => {
    for (const id of included) if ((await action(ws, id)).status !== "applied") return false;
    return true;
  });
  for (const id of held) assert.equal((await action(ws, id)).status, "pending", `held #${id} stays pending`);
  assert.ok(existsSync(join(files, "notes.md")), "notes.md was written by the filesystem server");
  assert.equal(existsSync(join(files, "migration.md")), false, "the held DROP TABLE file was not written");
  assert.ok(
    h.memoryState().some((l) => l.includes('"Beta"')),
    "Beta is in the memory server's state",
  );
  assert.equal(
    h.memoryState().some((l) => l.includes('"Alpha"')),
    false,
    "held Alpha is not",
  );
  assert.match(readFileSync(join(files, "notes.md"), "utf8"), /Alpha and Beta met/);
  // Risk first (checked on what stays pending; the gatekeeper's risk reasons are what it pins).
  const risky = page.locator('[data-testid="review-risky"]');
  await risky.locator(rowSel(ids.migration)).waitFor({ timeout: 10_000 });
  const reasons = risky.locator(`${rowSel(ids.migration)} [data-testid="risk-reasons"]`);
  assert.match(
    (await reasons.textContent()) ?? "",
    /DROP TABLE customers/,
    "the reason names what was flagged",
  );
  const riskyTop = (await risky.boundingBox())?.y ?? Number.POSITIVE_INFINITY;
  const groupTop = (await page.locator("[data-review-group]").first().boundingBox())?.y ?? -1;
  assert.ok(riskyTop < groupTop, "risky writes are above the groups");
  await page.context().close();
});

test("a batch carrying another action's digest is refused naming the action, and approves nothing", async () => {
  const ws = await h.workspace("mcp://memory");
  const ids = returned<{ x: number; y: number }>(
    await h.exec(
      ws,
      `export default async (env: any) => {
        const x = await env.MEMORY.create_entities({ entities: [{ name: "Xeno", entityType: "team", observations: [] }] });
        const y = await env.MEMORY.create_entities({ entities: [{ name: "Yara", entityType: "team", observations: [] }] });
        return { x: x.actionId, y: y.actionId };
      }`,
    ),
  );
  const y = await action(ws, ids.y);
  const refused = await api<ApiError>(
    base,
    tokenOf("dev-approver"),
    "POST",
    `/api/workspaces/${ws}/approve-batch`,
    {
      actionIds: [ids.x, ids.y],
      descriptionDigests: { [ids.x]: y.descriptionDigest, [ids.y]: y.descriptionDigest },
    },
  );
  assert.equal(refused.status, 409, JSON.stringify(refused.body));
  assert.equal(refused.body.error.code, "failed_precondition");
  assert.match(refused.body.error.message, new RegExp(`action ${ids.x}\\b`), "the refusal names the action");
  assert.equal((await action(ws, ids.x)).status, "pending");
  assert.equal((await action(ws, ids.y)).status, "pending", "nothing approved");
});

test("a group longer than the window draws only the rows near the screen, and the batch still names every row", async () => {
  const ws = await h.workspace("mcp://memory");
  const n = 150; // over the review page's REVIEW_WINDOW_FROM (100)
  const result = await h.exec(
    ws,
    `export default async (env: any) => {
      const ids: number[] = [];
      for (let i = 0; i < ${n}; i++) ids.push((await env.MEMORY.create_entities({ entities: [{ name: "Wide" + i, entityType: "t", observations: [] }] })).actionId);
      return ids;
    }`,
  );
  const ids = returned<number[]>(result);
  const page = await openApp(
    browser,
    base,
    tokenOf("dev-approver"),
    `/ws/${ws}/review?execution=${encodeURIComponent(result.executionId)}`,
  );
  await page.waitForSelector(`[data-testid="review-page"] h1 .count:text-is("${n}")`);
  await page.waitForSelector(rowSel(ids[0] as number));
  const drawn = await page.locator("[data-review-row]").count();
  assert.ok(drawn > 0 && drawn < n, `${drawn} of ${n} rows drawn`);
  const last = ids[n - 1] as number;
  await page.evaluate(() => window.scrollTo(0, document.documentElement.scrollHeight));
  await page.waitForSelector(rowSel(last));
  // The batch is captured and refused on the way out: this test is about what the page sends.
  let body: { actionIds: number[] } | undefined;
  await page.route(`**/api/workspaces/${ws}/approve-batch`, (r) => {
    body = r.request().postDataJSON() as { actionIds: number[] };
    void r.abort();
  });
  await page
    .locator(`${rowSel(last)} input[type="checkbox"]`)
    .first()
    .uncheck();
  await page.click('[data-testid="review-approve"]');
  await page.waitForSelector('[data-testid="review-status"]:has-text("Nothing approved")');
  assert.deepEqual(
    [...(body?.actionIds ?? [])].sort((a, b) => a - b),
    ids.slice(0, -1),
    "every row but the held one, drawn or not",
  );
  await page.context().close();
});

test("before approval, a file overwrite shows its diff against the current file and a write into a missing directory its pre-flight warning", async () => {
  const ws = await h.workspace("mcp://files");
  const files = join(h.dir, "files");
  const ledger = join(files, "ledger.md");
  writeFileSync(ledger, "# Ledger\n\nalpha\nbeta\n");
  const result = await h.exec(
    ws,
    `export default async (env: any) => {
      const over = await env.FILES.write_file({ path: ${JSON.stringify(ledger)}, content: "# Ledger\\n\\nalpha\\ngamma\\n" });
      const lost = await env.FILES.write_file({ path: ${JSON.stringify(join(files, "nowhere", "x.md"))}, content: "x\\n" });
      return { over: over.actionId, lost: lost.actionId };
    }`,
  );
  const ids = returned<{ over: number; lost: number }>(result);
  const page = await openApp(
    browser,
    base,
    tokenOf("dev-approver"),
    `/ws/${ws}/review?execution=${encodeURIComponent(result.executionId)}`,
  );
  await page.waitForSelector(rowSel(ids.lost));
  assert.match(
    (await page.locator(`${rowSel(ids.lost)} [data-testid="preflight-warning"]`).textContent()) ?? "",
    /the parent directory \S*nowhere does not exist: the write would fail/,
  );
  const over = page.locator(rowSel(ids.over)).first();
  assert.match(
    (await over.locator('[data-testid="risk-reasons"]').textContent()) ?? "",
    /destructive: replaces the existing file \S*ledger\.md/,
  );
  await over.locator('[data-testid="description-toggle"]').click();
  const description = over.locator('[data-testid="review-description"]');
  await description.waitFor();
  const lines = async (cls: string) =>
    (await description.locator(`.diff-line.${cls}`).allTextContents()).map((l) => l.trimEnd());
  assert.deepEqual(await lines("diff-del"), ["-beta"], "the diff against the current content");
  assert.deepEqual(await lines("diff-add"), ["+gamma"]);
  assert.match(
    (await description.locator("code.language-markdown").textContent()) ?? "",
    /^# Ledger\n\nalpha\ngamma\n?$/,
    "the new content as Markdown text lines",
  );
  assert.equal(readFileSync(ledger, "utf8"), "# Ledger\n\nalpha\nbeta\n", "nothing written before approval");
  await page.context().close();
});
