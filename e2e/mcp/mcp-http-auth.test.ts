/**
 * The MCP endpoint as an OAuth 2.1 protected resource and its session rules, over the real stack
 * with OIDC (a real JWKS-publishing issuer on loopback) beside the dev tokens: the RFC 9728
 * metadata found the way the MCP SDK's client finds it, 401 challenges pointing at it, refused tokens,
 * foreign Origins, sessions bound to their person and workspace, the session bound and idle expiry,
 * and the metrics they leave.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { startGateway } from "@gatehouse/gateway";
import { startTestIssuer, type TestIssuer } from "@gatehouse/gateway/test-issuer";
import { InProcessNoticeBus } from "@gatehouse/live-notices";
import { waitUntil } from "@gatehouse/service-kit";
import {
  discoverOAuthProtectedResourceMetadata,
  extractWWWAuthenticateParams,
} from "@modelcontextprotocol/sdk/client/auth.js";
import { OAuthProtectedResourceMetadataSchema } from "@modelcontextprotocol/sdk/shared/auth.js";
import { type Harness, startHarness, unary } from "../support/harness.ts";
import { connectMcpHttp, mcpUrl, structuredOf } from "../support/mcp-http-client.ts";

const AUDIENCE = "gatehouse-mcp-test";
let h: Harness;
let issuer: TestIssuer;
let base: string;
const tokenOf = (subject: string) => h.stack.devTokens.find((t) => t.subject === subject)?.token ?? "";

before(async () => {
  issuer = await startTestIssuer(AUDIENCE);
  h = await startHarness(undefined, {
    oidc: {
      issuer: issuer.issuer,
      audience: AUDIENCE,
      jwksUrl: issuer.jwksUrl,
      scope: "openid profile roles",
    },
  });
  base = h.stack.addresses.gateway;
});
after(async () => {
  await h?.close();
  await issuer?.close();
});

const initialize = {
  jsonrpc: "2.0",
  id: 1,
  method: "initialize",
  params: { protocolVersion: "2025-11-25", capabilities: {}, clientInfo: { name: "raw-http", version: "0" } },
};

/** One raw POST to /mcp (no MCP client), as a browser page or a misconfigured client would send it. */
function post(ws: string, headers: Record<string, string>, body: unknown = initialize) {
  return fetch(mcpUrl(base, ws), {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...headers,
    },
    body: JSON.stringify(body),
  });
}

const revisionOf = async (ws: string) => (await h.stack.store.readStream(`workspace-${ws}`)).length;

test("no token: 401 whose WWW-Authenticate points at the protected-resource metadata, which names the OIDC issuer (RFC 9728, found as the SDK client finds it)", async () => {
  const ws = await h.workspace("mcp://memory");
  const res = await post(ws, {});
  assert.equal(res.status, 401);
  const challenge = res.headers.get("www-authenticate") ?? "";
  assert.match(challenge, /^Bearer /);
  assert.doesNotMatch(challenge, /error=/, "no error code when no token was sent (RFC 6750 §3.1)");
  const { resourceMetadataUrl } = extractWWWAuthenticateParams(res);
  assert.equal(resourceMetadataUrl?.href, `${base}/.well-known/oauth-protected-resource/mcp`);
  const metadata = await discoverOAuthProtectedResourceMetadata(mcpUrl(base, ws), { resourceMetadataUrl });
  assert.deepEqual(OAuthProtectedResourceMetadataSchema.parse(metadata), metadata);
  assert.equal(metadata.resource, `${base}/mcp`);
  assert.deepEqual(metadata.authorization_servers, [issuer.issuer]);
  assert.deepEqual(metadata.bearer_methods_supported, ["header"]);
  const root = await fetch(`${base}/.well-known/oauth-protected-resource`);
  assert.deepEqual(await root.json(), metadata, "the root form serves the same document");
  await assert.rejects(connectMcpHttp(base, ws, undefined), (err: { code?: number }) => err.code === 401);
});

test("a URL without ?workspace= or with it twice is 400 saying which (and giving a real-looking id); PUT or PATCH is 405 with Allow: GET, POST, DELETE", async () => {
  const ws = await h.workspace("mcp://memory");
  const auth = { authorization: `Bearer ${tokenOf("dev-approver")}`, "content-type": "application/json" };
  const messageOf = async (res: Response) =>
    ((await res.json()) as { error: { message: string } }).error.message;
  const none = await fetch(`${base}/mcp`, {
    method: "POST",
    headers: auth,
    body: JSON.stringify(initialize),
  });
  assert.equal(none.status, 400);
  assert.match(
    await messageOf(none),
    /^add \?workspace=<id> to the MCP URL, e\.g\. \/mcp\?workspace=w445279630a$/,
  );
  const twice = await fetch(`${base}/mcp?workspace=${ws}&workspace=${ws}`, {
    method: "POST",
    headers: auth,
    body: JSON.stringify(initialize),
  });
  assert.equal(twice.status, 400);
  assert.match(await messageOf(twice), /^give one workspace: \?workspace= appears 2 times in the MCP URL/);
  for (const method of ["PUT", "PATCH"]) {
    const res = await fetch(mcpUrl(base, ws), { method, headers: auth, body: JSON.stringify(initialize) });
    assert.equal(res.status, 405, method);
    assert.equal(res.headers.get("allow"), "GET, POST, DELETE");
    assert.match(
      await messageOf(res),
      new RegExp(`^${method} is not a method of the MCP endpoint; it answers GET, POST, DELETE`),
    );
  }
});

test("expired and foreign-issuer tokens: 401 with error=invalid_token and the metadata pointer; a valid OIDC token opens a session", async () => {
  const ws = await h.workspaceOf("user:oidc-alice");
  const before = await revisionOf(ws);
  const claims = { sub: "oidc-alice", roles: ["approver"] };
  for (const token of [
    await issuer.sign(claims, { expiresIn: "-5m" }),
    await issuer.sign(claims, { issuer: "https://evil.example" }),
    await issuer.sign(claims, { key: "other" }),
  ]) {
    const res = await post(ws, { authorization: `Bearer ${token}` });
    assert.equal(res.status, 401);
    const params = extractWWWAuthenticateParams(res);
    assert.equal(params.error, "invalid_token");
    assert.equal(params.resourceMetadataUrl?.href, `${base}/.well-known/oauth-protected-resource/mcp`);
    assert.match(
      ((await res.json()) as { error: { message: string } }).error.message,
      /bearer token was refused/,
    );
  }
  const noRole = await post(ws, {
    authorization: `Bearer ${await issuer.sign({ sub: "oidc-bob", roles: [] })}`,
  });
  assert.equal(noRole.status, 403);
  assert.equal(await revisionOf(ws), before, "nothing was appended");
  const mcp = await connectMcpHttp(base, ws, await issuer.sign(claims));
  try {
    const r = await mcp.client.callTool({
      name: "execute_code",
      arguments: { code: "export default async () => 7" },
    });
    assert.equal(structuredOf<{ returnValue: number }>(r).returnValue, 7);
  } finally {
    await mcp.close();
  }
});

test("a token for person B cannot reach person A's workspace: 403 naming the workspace and its owner, nothing appended", async () => {
  const a = await h.workspaceOf("user:dev-approver");
  await unary(h.kernel, h.kernel.introduceResource, { workspaceId: a, url: "mcp://memory", name: "" });
  const before = await revisionOf(a);
  const refused = await post(a, { authorization: `Bearer ${tokenOf("dev-auditor")}` });
  assert.equal(refused.status, 403);
  assert.match(
    ((await refused.json()) as { error: { message: string } }).error.message,
    new RegExp(`dev-auditor is not a member of workspace ${a}.*user:dev-approver`),
  );
  await assert.rejects(
    connectMcpHttp(base, a, tokenOf("dev-admin")),
    (err: { code?: number }) => err.code === 403,
  );
  assert.equal(await revisionOf(a), before, "nothing was appended");
  const owner = await connectMcpHttp(base, a, tokenOf("dev-approver"));
  try {
    const r = await owner.client.callTool({
      name: "execute_code",
      arguments: { code: "export default async () => 5" },
    });
    assert.equal(structuredOf<{ returnValue: number }>(r).returnValue, 5, "the owner reaches it");
  } finally {
    await owner.close();
  }
});

test("membership is checked on every request: a member removed mid-session is refused at their next call", async () => {
  const ws = await h.workspaceOf("user:dev-approver", ["user:dev-auditor"]);
  const mcp = await connectMcpHttp(base, ws, tokenOf("dev-auditor"));
  try {
    const r = await mcp.client.callTool({
      name: "execute_code",
      arguments: { code: "export default async () => 6" },
    });
    assert.equal(structuredOf<{ returnValue: number }>(r).returnValue, 6);
    await unary(h.kernel, h.kernel.removeMember, {
      workspaceId: ws,
      member: "user:dev-auditor",
      removedBy: "user:dev-approver",
    });
    const before = await revisionOf(ws);
    await assert.rejects(
      mcp.client.callTool({ name: "execute_code", arguments: { code: "export default async () => 7" } }),
      (err: { code?: number; message: string }) =>
        err.code === 403 && /dev-auditor is not a member of workspace/.test(err.message),
    );
    assert.equal(await revisionOf(ws), before, "nothing was appended");
  } finally {
    await mcp.close();
  }
});

test("a page from a foreign Origin is refused with 403 (DNS rebinding); the gateway's own origin may call", async () => {
  const ws = await h.workspace("mcp://memory");
  const token = tokenOf("dev-approver");
  const foreign = await post(ws, { authorization: `Bearer ${token}`, origin: "http://evil.example:8780" });
  assert.equal(foreign.status, 403);
  assert.match(
    ((await foreign.json()) as { error: { message: string } }).error.message,
    /origin http:\/\/evil\.example:8780 may not call the MCP endpoint.*GATEWAY_MCP_ALLOWED_ORIGINS/,
  );
  const preflight = (origin: string) =>
    fetch(mcpUrl(base, ws), {
      method: "OPTIONS",
      headers: {
        origin,
        "access-control-request-method": "POST",
        "access-control-request-headers": "authorization",
      },
    });
  assert.equal((await preflight("http://evil.example:8780")).status, 403);
  const allowed = await preflight(new URL(base).origin);
  assert.equal(allowed.status, 204);
  assert.equal(allowed.headers.get("access-control-allow-origin"), new URL(base).origin);
  assert.match(allowed.headers.get("access-control-allow-headers") ?? "", /authorization/);
  const own = await post(ws, { authorization: `Bearer ${token}`, origin: new URL(base).origin });
  assert.equal(own.status, 200);
  assert.match(own.headers.get("access-control-expose-headers") ?? "", /mcp-session-id/);
  const session = own.headers.get("mcp-session-id") ?? "";
  assert.ok(session);
  await own.body?.cancel();
  const ended = await fetch(mcpUrl(base, ws), {
    method: "DELETE",
    headers: { authorization: `Bearer ${token}`, "mcp-session-id": session },
  });
  assert.equal(ended.status, 200);
});

test("a session belongs to its person and workspace: another person's token or another workspace is refused, appending nothing", async () => {
  const ws = await h.workspace("mcp://memory");
  const other = await h.workspace("mcp://memory");
  const mcp = await connectMcpHttp(base, ws, tokenOf("dev-approver"));
  try {
    const before = await revisionOf(ws);
    const otherBefore = await revisionOf(other);
    const call = {
      jsonrpc: "2.0",
      id: 2,
      method: "tools/call",
      params: {
        name: "execute_code",
        arguments: { code: "export default async (env: any) => env.MEMORY.read_graph({})" },
      },
    };
    const headers = { "mcp-session-id": mcp.sessionId, "mcp-protocol-version": "2025-11-25" };
    const stolen = await post(ws, { ...headers, authorization: `Bearer ${tokenOf("dev-auditor")}` }, call);
    assert.equal(stolen.status, 403);
    assert.match(
      ((await stolen.json()) as { error: { message: string } }).error.message,
      /opened by another person/,
    );
    const moved = await post(other, { ...headers, authorization: `Bearer ${tokenOf("dev-approver")}` }, call);
    assert.equal(moved.status, 400);
    assert.match(
      ((await moved.json()) as { error: { message: string } }).error.message,
      new RegExp(`bound to workspace ${ws}`),
    );
    const unknown = await post(
      ws,
      { ...headers, "mcp-session-id": "no-such-session", authorization: `Bearer ${tokenOf("dev-approver")}` },
      call,
    );
    assert.equal(unknown.status, 404, "an unknown session is 404, so the client starts a new one");
    assert.equal(await revisionOf(ws), before);
    assert.equal(await revisionOf(other), otherBefore);
    const noWorkspace = await fetch(new URL("/mcp", base), {
      method: "POST",
      headers: { "content-type": "application/json", authorization: `Bearer ${tokenOf("dev-approver")}` },
      body: JSON.stringify(initialize),
    });
    assert.equal(noWorkspace.status, 400);
    assert.match(
      ((await noWorkspace.json()) as { error: { message: string } }).error.message,
      /\?workspace=<id>/,
    );
  } finally {
    await mcp.close();
  }
});

test("at most GATEWAY_MCP_MAX_SESSIONS sessions; GATEWAY_MCP_ALLOWED_ORIGINS; idle ones expire (not one with a call under way), freeing their place; metrics count it all", async () => {
  const ws = await h.workspace("mcp://memory");
  const notices = new InProcessNoticeBus();
  const gateway = await startGateway({
    approvalAddress: h.stack.addresses.approval,
    kernelAddress: h.stack.addresses.kernel,
    notices,
    devTokens: h.stack.devTokens,
    mcp: { maxSessions: 2, idleMs: 1000, allowedOrigins: ["http://agents.example"] },
  });
  const token = tokenOf("dev-approver");
  try {
    const preflight = await fetch(mcpUrl(gateway.url, ws), {
      method: "OPTIONS",
      headers: { origin: "http://agents.example", "access-control-request-method": "POST" },
    });
    assert.equal(preflight.status, 204, "an origin allowed by GATEWAY_MCP_ALLOWED_ORIGINS may call");
    const busy = await connectMcpHttp(gateway.url, ws, token);
    const idle = await connectMcpHttp(gateway.url, ws, token);
    await assert.rejects(
      connectMcpHttp(gateway.url, ws, token),
      (err: { code?: number; message: string }) =>
        err.code === 503 && /maximum of 2 MCP sessions \(GATEWAY_MCP_MAX_SESSIONS\)/.test(err.message),
    );
    // A call that outlasts the idle time keeps its session.
    const long = await busy.client.callTool({
      name: "execute_code",
      arguments: {
        code: "export default async () => { const t = Date.now(); while (Date.now() - t < 2500) {} return 1; }",
      },
    });
    assert.equal(structuredOf<{ returnValue: number }>(long).returnValue, 1);
    // Any request would make the session active again: watch the metrics, then ask once.
    await waitUntil("the idle session to expire", async () =>
      /gatehouse_gateway_mcp_session_events_total\{event="expired"\} [1-9]/.test(
        await gateway.metrics.metrics(),
      ),
    );
    const gone = await fetch(mcpUrl(gateway.url, ws), {
      method: "GET",
      headers: {
        authorization: `Bearer ${token}`,
        "mcp-session-id": idle.sessionId,
        accept: "text/event-stream",
      },
    });
    await gone.body?.cancel();
    assert.equal(gone.status, 404, "an expired session is gone: its client must start a new one");
    const next = await connectMcpHttp(gateway.url, ws, token);
    await next.close();
    const text = await gateway.metrics.metrics();
    assert.match(text, /gatehouse_gateway_mcp_session_events_total\{event="refused_limit"\} 1/);
    assert.match(text, /gatehouse_gateway_mcp_session_events_total\{event="expired"\} [1-9]/);
    assert.match(text, /gatehouse_gateway_mcp_session_events_total\{event="opened"\} 3/);
    assert.match(text, /gatehouse_gateway_mcp_tool_calls_total\{tool="execute_code",outcome="ok"\} 1/);
    assert.match(text, /gatehouse_gateway_mcp_sessions [0-2]/);
    await busy.close().catch(() => {});
    await idle.client.close();
  } finally {
    await gateway.close();
    await notices.close();
  }
});
