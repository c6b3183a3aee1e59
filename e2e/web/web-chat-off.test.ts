/**
 * The agent chat pages in Chromium when the deployment runs no model: the list says why the agent
 * is off (GET /api/workspaces/:ws/agent's reason, naming what to configure) and offers no new chat.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import type { Browser } from "playwright-core";
import { launchBrowser, openApp } from "../support/browser.ts";
import { type Harness, startHarness } from "../support/harness.ts";

let h: Harness;
let browser: Browser;
const tokenOf = (subject: string) => h.stack.devTokens.find((t) => t.subject === subject)?.token ?? "";

before(async () => {
  // No model: an agent configuration naming none (the AGENT_* variables of this process are not read).
  h = await startHarness(undefined, {
    agent: {
      deployment: undefined,
      workspaces: new Map(),
      limits: { maxSteps: 12, maxTokens: 200_000, maxResultBytes: 16_384, modelAttempts: 4 },
    },
  });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await h?.close();
});

test("with no model configured the chats page shows why the agent is off and offers no new chat", async () => {
  const ws = await h.workspace("mcp://memory");
  const page = await openApp(browser, h.stack.addresses.gateway, tokenOf("dev-approver"), `/ws/${ws}/chats`);
  await page.waitForSelector('[data-testid="agent-off"]');
  const reason = (await page.textContent('[data-testid="agent-off"]')) ?? "";
  assert.match(reason, /AGENT_PROVIDER/, `the reason names what to set: ${reason}`);
  assert.equal(await page.isDisabled('[data-testid="new-chat"]'), true);
  await page.context().close();
});
