/**
 * Connection requests in the approver web app, in Chromium (playwright-core) against the dev stack
 * with the real filesystem MCP server: a request made through the kernel's Connections RPC appears
 * in an open inbox live, with its URL, the agent's reason and the chat that asked; accepting with a
 * narrowed scope fragment introduces exactly that binding; declining records the reason.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { ConnectionsClient } from "@gatehouse/proto";
import { credentials } from "@grpc/grpc-js";
import type { Browser } from "playwright-core";
import { launchBrowser, openApp, SCREENSHOTS, scrollsSideways } from "../support/browser.ts";
import { type Harness, startHarness, unary } from "../support/harness.ts";

let h: Harness;
let browser: Browser;
let connections: ConnectionsClient;
const tokenOf = (subject: string) => h.stack.devTokens.find((t) => t.subject === subject)?.token ?? "";

before(async () => {
  h = await startHarness();
  browser = await launchBrowser();
  connections = new ConnectionsClient(h.stack.addresses.kernel, credentials.createInsecure());
});
after(async () => {
  connections?.close();
  await browser?.close();
  await h?.close();
});

test("a connection request appears live in the inbox; accepting it with a narrowed fragment introduces that binding, declining records the reason", async () => {
  const ws = await h.workspace();
  const page = await openApp(browser, h.stack.addresses.gateway, tokenOf("dev-approver"));
  await page.waitForSelector(`section[data-workspace="${ws}"]`);

  const asked = await unary(connections, connections.requestConnection, {
    workspaceId: ws,
    url: "mcp://files#tool=read_text_file&tool=write_file",
    reason: "I need to read\u202E the design notes",
    caller: { kind: "agent", id: "chat-9" },
  });
  const row = `section[data-workspace="${ws}"] [data-testid="connection-request"][data-request-id="${asked.requestId}"]`;
  await page.waitForSelector(row, { timeout: 60_000 });
  assert.match((await page.textContent('[data-testid="connection-count"]')) ?? "", /1 connection request$/);
  assert.equal(
    await page.textContent(`${row} [data-testid="connection-url"]`),
    "mcp://files#tool=read_text_file&tool=write_file",
  );
  assert.equal(
    await page.textContent(`${row} [data-testid="connection-reason"]`),
    "The agent says: I need to read⟨U+202E⟩ the design notes",
    "the agent's reason is shown inert, its direction control marked",
  );
  assert.equal(await page.textContent(`${row} [data-testid="connection-caller"]`), "agent:chat-9");

  await page.click(`${row} [data-testid="connection-accept"]`);
  assert.equal(
    await page.inputValue(`${row} [data-testid="connection-fragment"]`),
    "tool=read_text_file&tool=write_file",
  );
  await page.fill(`${row} [data-testid="connection-fragment"]`, "tool=read_text_file");
  await page.fill(`${row} [data-testid="connection-name"]`, "NOTES");
  await page.screenshot({ path: join(SCREENSHOTS, "inbox-connection-request.png") });
  await page.click(`${row} [data-testid="connection-accept-confirm"]`);
  await page.waitForSelector(
    '[data-testid="connection-note"]:has-text("Connected NOTES (mcp://files#tool=read_text_file)")',
  );
  await page.waitForFunction((sel) => !document.querySelector(sel), row);
  const bindings = await unary(h.kernel, h.kernel.describeBindings, { workspaceId: ws });
  assert.deepEqual(
    bindings.bindings.map((b) => [b.name, b.url]),
    [["NOTES", "mcp://files#tool=read_text_file"]],
  );
  const accepted = await unary(connections, connections.getConnectionRequest, {
    workspaceId: ws,
    requestId: asked.requestId,
    wait: false,
  });
  assert.deepEqual([accepted.state, accepted.decidedBy], ["accepted", "dev-approver"]);

  const second = await unary(connections, connections.requestConnection, {
    workspaceId: ws,
    url: "mcp://memory",
    reason: "to remember things",
    caller: { kind: "agent", id: "chat-9" },
  });
  const row2 = `[data-testid="connection-request"][data-request-id="${second.requestId}"]`;
  await page.waitForSelector(row2, { timeout: 60_000 });
  await page.click(`${row2} [data-testid="connection-decline"]`);
  assert.equal(await page.isDisabled(`${row2} [data-testid="connection-decline-confirm"]`), true);
  await page.fill(`${row2} [data-testid="connection-decline-reason"]`, "memory is not for this project");
  await page.click(`${row2} [data-testid="connection-decline-confirm"]`);
  await page.waitForFunction((sel) => !document.querySelector(sel), row2);
  const declined = await unary(connections, connections.getConnectionRequest, {
    workspaceId: ws,
    requestId: second.requestId,
    wait: false,
  });
  assert.deepEqual(
    [declined.state, declined.declineReason, declined.decidedBy],
    ["declined", "memory is not for this project", "dev-approver"],
  );
  await page.context().close();
});

test("an auditor sees connection requests without decision controls, and the row fits a phone", async () => {
  const ws = await h.workspace();
  const asked = await unary(connections, connections.requestConnection, {
    workspaceId: ws,
    url: "mcp://files#tool=read_text_file",
    reason: "a long reason ".repeat(30),
    caller: { kind: "agent", id: "chat-10" },
  });
  const page = await openApp(browser, h.stack.addresses.gateway, tokenOf("dev-auditor"), "/", {
    width: 390,
    height: 844,
  });
  const row = `[data-testid="connection-request"][data-request-id="${asked.requestId}"]`;
  await page.waitForSelector(row);
  assert.equal(await page.locator(`${row} [data-testid="connection-accept"]`).count(), 0);
  assert.equal(await scrollsSideways(page), false);
  await page.screenshot({ path: join(SCREENSHOTS, "inbox-connection-request-phone.png") });
  await page.context().close();
});
