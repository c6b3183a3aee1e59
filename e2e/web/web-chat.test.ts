/**
 * The agent chat page in Chromium (playwright-core) against the stack `gatehouse dev` runs: the real
 * kernel, gVisor sandbox, memory MCP server, approval service, Temporal dev server and gateway, live
 * notices and streamed model text through a real nats-server, and the model a FAKE OpenAI-compatible
 * server (no real model can be reached here) replaying a paced script.
 */
import assert from "node:assert/strict";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { AgentConfig } from "@gatehouse/agent-core/providers";
import { type FakeOpenAiServer, startFakeOpenAiServer } from "@gatehouse/agent-core/testing";
import { type NatsServerProcess, startNatsServer } from "@gatehouse/live-notices/nats-server";
import type { Browser, Page } from "playwright-core";
import { launchBrowser, openApp, SCREENSHOTS, scrollsSideways } from "../support/browser.ts";
import { type Harness, startHarness } from "../support/harness.ts";

let fake: FakeOpenAiServer;
let nats: NatsServerProcess;
let h: Harness;
let browser: Browser;
const tokenOf = (subject: string) => h.stack.devTokens.find((t) => t.subject === subject)?.token ?? "";

before(async () => {
  assert.ok(existsSync(join(import.meta.dirname, "../../web/dist/index.html")), "web/dist is built");
  fake = await startFakeOpenAiServer();
  nats = await startNatsServer();
  const agent: AgentConfig = {
    deployment: { provider: "openai-compatible", model: "fake-coder", baseUrl: fake.baseUrl },
    workspaces: new Map(),
    limits: { maxSteps: 8, maxTokens: 100_000, maxResultBytes: 16_384, modelAttempts: 3 },
  };
  h = await startHarness(undefined, { agent, natsUrl: nats.url });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await h?.close();
  await nats?.close();
  await fake?.close();
});

/** The tool call the model makes to run `code`. */
const run = (code: string) => ({ name: "executeCode", arguments: JSON.stringify({ code }) });

const FIRST_TEXT = "Let me look at the memory graph first, then add Grace.";
const LAST_TEXT = 'Grace is in the memory graph now. <img src="x" onerror="window.pwned=1"> **Done.**';

/** Records in the page every text the streaming answer shows, in order (a string: tsx helpers do not exist in the page). */
async function recordStreamed(page: Page): Promise<void> {
  await page.evaluate(`(() => {
    window.streamed = [];
    const mark = () => {
      for (const el of document.querySelectorAll('[data-testid="model-streaming"] .markdown')) {
        const text = el.textContent;
        if (text && window.streamed.at(-1) !== text) window.streamed.push(text);
      }
    };
    new MutationObserver(mark).observe(document.body, { subtree: true, childList: true, characterData: true });
  })()`);
}

test("a person chats with the agent: the model's text streams in, a malformed call shows its problem, a snippet expands to its result, the awaited write links to its action, approving it resumes the turn to its end", async () => {
  const ws = await h.workspace("mcp://memory");
  fake.push(
    {
      kind: "tool_calls",
      text: FIRST_TEXT,
      chunkChars: 3,
      chunkDelayMs: 60,
      calls: [
        run(`export default async (env: any) => {
  console.log("reading the graph");
  const graph = await env.MEMORY.read_graph({});
  return { parts: graph.content.length };
};`),
      ],
    },
    { kind: "tool_calls", calls: [{ name: "executeCode", arguments: '{"code": "export default' }] },
    {
      kind: "tool_calls",
      calls: [
        run(`export default async (env: any) =>
  (await env.MEMORY.create_entities({ entities: [{ name: "Grace", entityType: "person", observations: ["met"] }] })).actionId;`),
      ],
    },
    { kind: "text", text: LAST_TEXT, chunkChars: 4, chunkDelayMs: 40 },
  );

  const page = await openApp(browser, h.stack.addresses.gateway, tokenOf("dev-approver"), `/ws/${ws}/chats`);
  await page.waitForSelector('[data-testid="agent-model"]:has-text("fake-coder")');
  await page.click('[data-testid="new-chat"]');
  await page.waitForSelector('[data-testid="chat-input"]:not([disabled])');
  // Another member watches the same chat: read-only for them, live all the same.
  const chatRoute = new URL(page.url()).hash.slice(1);
  const watcher = await openApp(browser, h.stack.addresses.gateway, tokenOf("dev-admin"), chatRoute);
  await watcher.waitForSelector('[data-testid="not-owner"]');
  assert.equal(await watcher.$('[data-testid="chat-input"]'), null, "only the chat's starter can send");
  for (const p of [page, watcher]) await recordStreamed(p);
  await page.fill('[data-testid="chat-input"]', "Add Grace to the memory graph.");
  await page.click('[data-testid="chat-send"]');
  await page.waitForSelector('[data-testid="user-message"]:has-text("Add Grace to the memory graph.")');
  assert.equal(
    await page.isDisabled('[data-testid="chat-input"]'),
    true,
    "no sending while the turn is open",
  );
  assert.ok(await page.isVisible('[data-testid="chat-cancel"]'), "an open turn can be cancelled");

  // The first answer streams in, then the recorded text replaces it.
  await page.waitForSelector('[data-testid="model-message"][data-step="1"]', { timeout: 240_000 });
  assert.equal(
    (await page.textContent('[data-testid="model-message"][data-step="1"] .markdown'))?.trim(),
    FIRST_TEXT,
  );
  await watcher.waitForSelector('[data-testid="model-message"][data-step="1"]', { timeout: 60_000 });
  for (const [who, p] of [
    ["the chat's starter", page],
    ["a member watching", watcher],
  ] as const) {
    const streamed = (await p.evaluate("window.streamed")) as string[];
    assert.ok(
      streamed.some((s) => s.length > 0 && s.length < FIRST_TEXT.length && FIRST_TEXT.startsWith(s)),
      `${who} saw part of the text before the whole: ${JSON.stringify(streamed)}`,
    );
    assert.ok(
      streamed.every((s) => FIRST_TEXT.startsWith(s)),
      `the streamed text only ever grew, in order, for ${who}`,
    );
  }
  await watcher.context().close();

  // The first snippet, collapsed, expands to its code and result (console and return value).
  const first = page.locator('[data-testid="tool-call"]').first();
  await first.locator('[data-testid="snippet-outcome"]:has-text("ok")').waitFor({ timeout: 240_000 });
  assert.equal(
    await first.locator('[data-testid="snippet-result"]').isVisible(),
    false,
    "collapsed at first",
  );
  await first.locator("summary").click();
  await first.locator('[data-testid="snippet-result"]').waitFor({ state: "visible" });
  assert.match((await first.locator('[data-testid="snippet-code"]').textContent()) ?? "", /read_graph/);
  const result = (await first.locator('[data-testid="snippet-result"]').textContent()) ?? "";
  assert.match(result, /reading the graph/, "the console is shown");
  assert.match(result, /parts/, "the return value is shown");

  // The malformed call: not run, its problem shown.
  const malformed = '[data-testid="tool-call"]:has([data-testid="snippet-outcome"]:has-text("not run"))';
  await page.waitForSelector(malformed, { timeout: 240_000 });
  await page.click(`${malformed} summary`);
  assert.ok(((await page.textContent(`${malformed} [data-testid="snippet-problem"]`)) ?? "").length > 10);

  // The awaited write: the turn waits for people, the write links to its action page.
  await page.waitForSelector('[data-testid="turn-state"][data-state="waiting"]', { timeout: 240_000 });
  const link = '[data-testid="write-link"]';
  await page.waitForSelector(link);
  const actionId = await page.getAttribute(link, "data-action-id");
  assert.ok(actionId, "the write names its action");
  assert.equal(
    await page.getAttribute(`[data-testid="awaited-link"][data-action-id="${actionId}"]`, "href"),
    `#/ws/${ws}/actions/${actionId}`,
    "the turn's state links the awaited write",
  );
  assert.ok(!h.memoryState().some((l) => l.includes('"Grace"')), "the write waits for a person");
  await page.screenshot({ path: join(SCREENSHOTS, "chat-waiting.png"), fullPage: true });

  // Approve it from its action page; back in the chat the turn resumes and ends.
  await page.click(link);
  await page.waitForSelector('[data-testid="approve"]');
  await page.click('[data-testid="approve"]');
  await page.waitForSelector('[data-testid="status"]:has-text("applied")', { timeout: 120_000 });
  await page.goBack();
  await page.waitForSelector('[data-testid="turn-state"][data-state="ended"][data-reason="done"]', {
    timeout: 240_000,
  });
  const last = (await page.textContent('[data-testid="model-message"][data-step="4"] .markdown')) ?? "";
  assert.match(last, /Grace is in the memory graph now\./);
  assert.match(last, /<img src="x" onerror="window.pwned=1">/, "raw HTML is shown as text");
  assert.equal(
    await page.$('[data-testid="model-message"] img'),
    null,
    "no HTML element came from the model",
  );
  assert.equal(await page.evaluate("window.pwned"), undefined);
  assert.equal(
    await page.textContent('[data-testid="model-message"][data-step="4"] strong'),
    "Done.",
    "Markdown is rendered",
  );
  assert.equal(
    await page.$('[data-testid="model-streaming"]'),
    null,
    "the recorded text replaced the stream",
  );
  assert.equal(await page.isDisabled('[data-testid="chat-input"]'), false, "the send box is open again");
  assert.equal(await page.$('[data-testid="chat-cancel"]'), null);
  assert.equal(h.memoryState().filter((l) => l.includes('"Grace"')).length, 1, "the write applied once");
  await page.screenshot({ path: join(SCREENSHOTS, "chat-ended.png"), fullPage: true });
  // Readable on a phone: open snippets scroll inside their box, not the page.
  await page.evaluate(
    `document.querySelectorAll('[data-testid="snippet"]').forEach((d) => { d.open = true; })`,
  );
  await page.setViewportSize({ width: 390, height: 844 });
  assert.equal(await scrollsSideways(page), false, "the chat does not scroll sideways at 390 px");
  await page.screenshot({ path: join(SCREENSHOTS, "chat-phone.png"), fullPage: true });

  // The chat list shows it, ended, titled by the first message.
  await page.evaluate((r) => {
    window.location.hash = `#${r}`;
  }, `/ws/${ws}/chats`);
  await page.waitForSelector('[data-testid="chat-row"] [data-testid="chat-state"]:has-text("ended")');
  assert.match((await page.textContent('[data-testid="chat-link"]')) ?? "", /Add Grace/);
  await page.context().close();
});

test("cancel stops an open turn: it ends cancelled and the send box opens again", async () => {
  const ws = await h.workspace("mcp://memory");
  // A model that takes 20 s to answer: long enough to cancel meanwhile.
  fake.push({ kind: "text", text: "too late", delayMs: 20_000 });
  const page = await openApp(browser, h.stack.addresses.gateway, tokenOf("dev-approver"), `/ws/${ws}/chats`);
  await page.click('[data-testid="new-chat"]');
  await page.waitForSelector('[data-testid="chat-input"]:not([disabled])');
  await page.fill('[data-testid="chat-input"]', "Take your time.");
  await page.click('[data-testid="chat-send"]');
  await page.waitForSelector('[data-testid="chat-cancel"]');
  await page.click('[data-testid="chat-cancel"]');
  await page.waitForSelector('[data-testid="turn-state"][data-state="ended"][data-reason="cancelled"]', {
    timeout: 240_000,
  });
  assert.equal(await page.isDisabled('[data-testid="chat-input"]'), false);
  await page.context().close();
});
