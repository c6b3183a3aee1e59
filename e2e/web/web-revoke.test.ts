/**
 * Removing a binding from the web app and the gateway API, against the dev stack with the real
 * memory MCP server, in Chromium (playwright-core): only the workspace's owner (here dev-admin, who
 * owns the harness's workspaces) gets the control and the route — members of any role get 403
 * naming the owner; it confirms first, showing how many waiting writes it rejects.
 */
import assert from "node:assert/strict";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { ApiError, RemoveBindingResult } from "@gatehouse/gateway-contract";
import { ActionStatus } from "@gatehouse/proto";
import type { Browser } from "playwright-core";
import { launchBrowser, openApp, SCREENSHOTS } from "../support/browser.ts";
import { api } from "../support/gateway-client.ts";
import { type Harness, returned, startHarness, unary } from "../support/harness.ts";

let h: Harness;
let browser: Browser;
const tokenOf = (subject: string) => h.stack.devTokens.find((t) => t.subject === subject)?.token ?? "";

before(async () => {
  h = await startHarness();
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await h?.close();
});

const twoWrites = `export default async (env: any) => {
  const a = await env.MEMORY.create_entities({ entities: [{ name: "WebRevoked", entityType: "t", observations: [] }] });
  const b = await env.MEMORY.add_observations(
    { observations: [{ entityName: "WebRevoked", contents: ["x"] }] },
    { dependsOn: [a.actionId] },
  );
  return [a.actionId, b.actionId];
}`;

test("the gateway lets only the workspace's owner remove a binding: the approver and auditor members get 403 naming the owner, bad input 400, a second removal 404", async () => {
  const ws = await h.workspace("mcp://memory");
  const base = h.stack.addresses.gateway;
  const path = `/api/workspaces/${ws}/bindings/MEMORY/remove`;
  for (const who of ["dev-approver", "dev-auditor"]) {
    const refused = await api<ApiError>(base, tokenOf(who), "POST", path, {});
    assert.equal(refused.status, 403, who);
    assert.match(
      refused.body.error.message,
      new RegExp(
        `user:${who} is a member of workspace ${ws} but not its owner: removing a binding needs the owner \\(user:dev-admin\\)`,
      ),
    );
  }
  const bad = await api<ApiError>(base, tokenOf("dev-admin"), "POST", path, { reason: 5 });
  assert.equal(bad.status, 400);
  assert.match(bad.body.error.message, /reason is text/);
  const badName = await api<ApiError>(
    base,
    tokenOf("dev-admin"),
    "POST",
    `/api/workspaces/${ws}/bindings/9x/remove`,
    {},
  );
  assert.equal(badName.status, 400);
  assert.match(badName.body.error.message, /a binding name has letters/);
  const [a, b] = returned<[number, number]>(await h.exec(ws, twoWrites));
  const ok = await api<RemoveBindingResult>(base, tokenOf("dev-admin"), "POST", path, { reason: "test" });
  assert.equal(ok.status, 200);
  assert.deepEqual(ok.body, { binding: "MEMORY", rejected: [a], cascaded: [b] });
  const again = await api<ApiError>(base, tokenOf("dev-admin"), "POST", path, {});
  assert.equal(again.status, 404);
  assert.match(again.body.error.message, /binding MEMORY is not a binding of workspace/);
});

test("on the Rules page the owner (dev-admin) removes a binding after a confirmation that counts its waiting writes; an approver has no such control", async () => {
  const ws = await h.workspace("mcp://memory");
  const [a, b] = returned<[number, number]>(await h.exec(ws, twoWrites));

  const approver = await openApp(
    browser,
    h.stack.addresses.gateway,
    tokenOf("dev-approver"),
    `/ws/${ws}/rules`,
  );
  await approver.waitForSelector('section[data-binding="MEMORY"]');
  assert.equal(
    await approver.locator('[data-testid="remove-binding"]').count(),
    0,
    "a member who is not the owner cannot remove bindings",
  );
  await approver.context().close();

  const admin = await openApp(browser, h.stack.addresses.gateway, tokenOf("dev-admin"), `/ws/${ws}/rules`);
  const section = 'section[data-binding="MEMORY"]';
  await admin.click(`${section} [data-testid="remove-binding"]`);
  const pending = (await admin.textContent(`${section} [data-testid="remove-binding-pending"]`)) ?? "";
  assert.match(pending, /^2 waiting write\(s\) of this binding will be rejected \("binding removed"\)/);
  // Cancel keeps it; nothing was removed.
  await admin.click(`${section} [data-testid="remove-binding-no"]`);
  assert.equal(
    (await unary(h.decisions, h.decisions.getAction, { workspaceId: ws, actionId: a })).status,
    ActionStatus.ACTION_STATUS_PENDING,
  );

  await admin.click(`${section} [data-testid="remove-binding"]`);
  await admin.fill(`${section} [data-testid="remove-binding-reason"]`, "project ended");
  await admin.click(`${section} [data-testid="remove-binding-yes"]`);
  await admin.waitForSelector(
    '[role="status"]:has-text("Removed MEMORY; 2 waiting write(s) were rejected.")',
  );
  await admin.waitForFunction(() => !document.querySelector('[data-testid="remove-binding"]'));
  await admin.screenshot({ path: join(SCREENSHOTS, "rules-binding-removed.png") });

  const ra = await unary(h.decisions, h.decisions.getAction, { workspaceId: ws, actionId: a });
  const rb = await unary(h.decisions, h.decisions.getAction, { workspaceId: ws, actionId: b });
  assert.deepEqual(
    [ra.status, ra.reason, ra.decidedBy],
    [ActionStatus.ACTION_STATUS_REJECTED, "binding removed", "dev-admin"],
  );
  assert.equal(rb.cascadedFrom, a);
  const described = await unary(h.kernel, h.kernel.describeBindings, { workspaceId: ws });
  assert.deepEqual(described.bindings, []);
  await admin.context().close();
});
