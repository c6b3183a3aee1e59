/**
 * Browser single sign-on: the web app signs a person in with a real OpenID Connect provider
 * (authorization code + PKCE), and the gateway accepts the ID token it gets, with the role from the
 * token's `roles` claim — an auditor signed in this way cannot decide.
 */
import assert from "node:assert/strict";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, test } from "node:test";
import { type DevStack, startDevStack } from "@gatehouse/dev-stack";
import { KernelClient } from "@gatehouse/proto";
import { callUnary, freePort } from "@gatehouse/service-kit";
import { credentials } from "@grpc/grpc-js";
import type { Browser, Page } from "playwright-core";
import { launchBrowser } from "../support/browser.ts";
import { type OidcIssuer, startOidcIssuer } from "../support/oidc-issuer.ts";

let stack: DevStack;
let issuer: OidcIssuer;
let browser: Browser;
let dir: string;
const CLIENT = "gatehouse-web";

before(async () => {
  const [gatewayPort, issuerPort] = [await freePort(), await freePort()];
  issuer = await startOidcIssuer({
    port: issuerPort,
    clientId: CLIENT,
    redirectUri: `http://127.0.0.1:${gatewayPort}/`,
  });
  dir = mkdtempSync(join(tmpdir(), "gatehouse-oidc-"));
  stack = await startDevStack({
    dataDir: dir,
    ports: { gateway: gatewayPort },
    oidc: { issuer: issuer.issuer, audience: CLIENT, clientId: CLIENT, scope: "openid profile roles" },
  });
  browser = await launchBrowser();
});
after(async () => {
  await browser?.close();
  await stack?.close();
  await issuer?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function signIn(login: string, route = "/"): Promise<Page> {
  const page = await (await browser.newContext()).newPage();
  await page.goto(`${stack.addresses.gateway}${route}`);
  await page.click('[data-testid="sso"]');
  await page.waitForURL((url) => url.href.startsWith(issuer.issuer));
  await page.fill('input[name="login"]', login);
  await page.fill('input[name="password"]', "any");
  await page.click('button[type="submit"]');
  await page.waitForSelector('button:has-text("Continue")');
  await page.click('button:has-text("Continue")');
  await page.waitForSelector('[data-testid="me-name"]', { timeout: 60_000 });
  return page;
}

test("single sign-on with a real OIDC provider: the code flow with PKCE signs the person in, the URL keeps no code, and the role comes from the token", async () => {
  const page = await signIn("ann");
  assert.equal(await page.textContent('[data-testid="me-name"]'), "Person ann");
  assert.match((await page.textContent('[data-testid="me-roles"]')) ?? "", /approver/);
  assert.doesNotMatch(page.url(), /code=|state=/, "the code is not left in the address bar");
  const me = await page.evaluate(async () => {
    const token = sessionStorage.getItem("gatehouse.token") ?? "";
    const r = await fetch("/api/me", { headers: { authorization: `Bearer ${token}` } });
    return { status: r.status, body: await r.json(), parts: token.split(".").length };
  });
  assert.equal(me.status, 200);
  assert.equal(me.parts, 3, "the bearer is a JWT (the ID token)");
  assert.equal(me.body.subject, "ann");
  await page.context().close();
});

test("a person the provider marks auditor signs in read-only, and the gateway refuses their decisions in a workspace they are a member of", async () => {
  const kernel = new KernelClient(stack.addresses.kernel, credentials.createInsecure());
  const ws = await callUnary(kernel, kernel.createWorkspace, {
    name: "oidc",
    owner: "user:ann",
    members: ["user:auditor-bo"],
  }).finally(() => kernel.close());
  const page = await signIn("auditor-bo");
  await page.waitForSelector('[data-testid="read-only"]');
  const res = await page.evaluate(async (id) => {
    const token = sessionStorage.getItem("gatehouse.token") ?? "";
    const r = await fetch(`/api/workspaces/${id}/actions/1/approve`, {
      method: "POST",
      headers: { authorization: `Bearer ${token}`, "content-type": "application/json" },
      body: "{}",
    });
    return { status: r.status, body: await r.json() };
  }, ws.id);
  assert.equal(res.status, 403);
  assert.match(res.body.error.message, /auditor-bo has role\(s\) auditor/);
  await page.context().close();
});

test("a review link opened before signing in (as in a notification) opens that review page after single sign-on", async () => {
  const kernel = new KernelClient(stack.addresses.kernel, credentials.createInsecure());
  const ws = await callUnary(kernel, kernel.createWorkspace, {
    name: "link",
    owner: "user:ann",
    members: [],
  }).finally(() => kernel.close());
  const route = `#/ws/${ws.id}/review?execution=e-1`;
  const page = await signIn("ann", `/${route}`);
  await page.waitForSelector('[data-testid="review-page"]');
  assert.equal(new URL(page.url()).hash, route);
  assert.doesNotMatch(page.url(), /code=|state=/);
  await page.context().close();
});
