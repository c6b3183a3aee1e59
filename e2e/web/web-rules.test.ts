/**
 * The approver web app's rules, latch banner and log replay in Chromium (playwright-core), against
 * the dev stack with the real files and memory MCP servers; `read_text_file` flags restricted data.
 */
import assert from "node:assert/strict";
import { existsSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { devRegistry } from "@gatehouse/dev-stack";
import { waitUntil } from "@gatehouse/service-kit";
import type { Browser } from "playwright-core";
import { launchBrowser, openApp } from "../support/browser.ts";
import { type Harness, returned, startHarness } from "../support/harness.ts";

let h: Harness;
let browser: Browser;
const tokenOf = (subject: string) => h.stack.devTokens.find((t) => t.subject === subject)?.token ?? "";
const dirOf = `(await env.FILES.list_allowed_directories({})).content[0].text.split("\\n").find((l: string) => l.startsWith("/"))`;

before(async () => {
  h = await startHarness((dir) => {
    const registry = devRegistry(dir);
    registry.servers.files!.restrictedTools = ["read_text_file"];
    return registry;
  });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await h?.close();
});

test("an admin enables a rule on the Rules page and the waiting write auto-applies; after a restricted read the latch banner explains what it blocks; the log replays the time before", async () => {
  writeFileSync(join(h.dir, "files", "salaries.csv"), "alice,100\n");
  const ws = await h.workspace("mcp://files", "mcp://memory");
  const first = returned<number>(
    await h.exec(
      ws,
      `export default async (env: any) => (await env.FILES.create_directory({ path: ${dirOf} + "/reports" })).actionId`,
    ),
  );

  // An approver sees the rules read-only; the admin can toggle them.
  const approver = await openApp(
    browser,
    h.stack.addresses.gateway,
    tokenOf("dev-approver"),
    `/ws/${ws}/rules`,
  );
  const toggle =
    '[data-testid="rule"][data-binding="FILES"][data-tag="mcp.tool.create_directory"] [data-testid="rule-toggle"]';
  await approver.waitForSelector(toggle);
  assert.equal(await approver.isDisabled(toggle), true, "approvers cannot set rules");
  await approver.context().close();

  const admin = await openApp(browser, h.stack.addresses.gateway, tokenOf("dev-admin"), `/ws/${ws}/rules`);
  await admin.waitForSelector(toggle);
  await admin.click(toggle);
  await admin.waitForSelector(`${toggle}:checked`);
  await waitUntil(`the pending create_directory (action ${first}) to be auto-approved and applied`, () =>
    existsSync(join(h.dir, "files", "reports")),
  );
  const beforeLatch = await h.stack.store.streamRevision(`workspace-${ws}`);

  // A restricted read latches the workspace; a write to the other binding is refused.
  const refused = returned<string>(
    await h.exec(
      ws,
      `export default async (env: any) => {
        const text = (await env.FILES.read_text_file({ path: ${dirOf} + "/salaries.csv" })).content[0].text;
        try { await env.MEMORY.create_entities({ entities: [{ name: text, entityType: "leak", observations: [] }] }); return "submitted"; }
        catch (e: any) { return "refused: " + e.message; }
      }`,
    ),
  );
  assert.match(refused, /^refused/);
  await admin.waitForSelector('[data-testid="latch-banner"]');
  const banner = (await admin.textContent('[data-testid="latch-banner"]')) ?? "";
  assert.match(banner, /restricted/i);
  assert.match(banner, /auto-approval/i);
  await admin.evaluate(() => {
    window.location.hash = "#/";
  });
  await admin.waitForSelector(`section[data-workspace="${ws}"] [data-testid="latch-banner"]`);

  // The log: live shows the refusal; replayed as of the revision before the latch it does not.
  await admin.evaluate((w) => {
    window.location.hash = `#/ws/${w}/log`;
  }, ws);
  await admin.waitForSelector('[data-testid="log-entry"][data-kind="refusal"]');
  await admin.locator('[data-testid="revision-slider"]').fill(String(beforeLatch));
  await admin.waitForFunction(
    (rev) => document.querySelector('[data-testid="log-revision"]')?.textContent === String(rev),
    beforeLatch,
  );
  assert.equal(await admin.locator('[data-testid="log-entry"][data-kind="refusal"]').count(), 0);
  assert.equal(await admin.locator('[data-testid="latch-banner"]').count(), 0, "not latched back then");
  await admin.context().close();
});

test("the Rules page offers, before any action, only the kinds a rule can approve, and greys the others with the reason", async () => {
  const ws = await h.workspace("mcp://files");
  const admin = await openApp(browser, h.stack.addresses.gateway, tokenOf("dev-admin"), `/ws/${ws}/rules`);
  try {
    const row = (tag: string) => `[data-testid="rule"][data-binding="FILES"][data-tag="${tag}"]`;
    await admin.waitForSelector(row("mcp.tool.create_directory"));
    assert.equal(await admin.getAttribute(row("mcp.tool.create_directory"), "data-allowed"), "true");
    assert.equal(
      await admin.isDisabled(`${row("mcp.tool.create_directory")} [data-testid="rule-toggle"]`),
      false,
    );

    const never = row("mcp.tool.write_file");
    assert.equal(await admin.getAttribute(never, "data-allowed"), "false");
    assert.equal(
      await admin.isDisabled(`${never} [data-testid="rule-toggle"]`),
      true,
      "no toggle for a kind that can never be auto-approved",
    );
    assert.match(
      (await admin.textContent(`${never} [data-testid="rule-why"]`)) ?? "",
      /always needs a person: .*destructiveHint/,
    );
    assert.equal(
      await admin.locator(row("mcp.tool.read_text_file")).count(),
      0,
      "reads are not action kinds",
    );
  } finally {
    await admin.context().close();
  }
});
