import assert from "node:assert/strict";
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { test } from "node:test";
import { loadConfig } from "../src/config.ts";

const base = { NATS_URL: "nats://127.0.0.1:4222" };

test("the gateway refuses to start without a way to authenticate people, naming the variables", () => {
  assert.throws(
    () => loadConfig({ ...base }),
    /OIDC_ISSUER: configure OIDC \(OIDC_ISSUER \+ OIDC_AUDIENCE\) or dev tokens/,
  );
  assert.throws(
    () => loadConfig({ ...base, OIDC_ISSUER: "https://id.example.com" }),
    /OIDC_AUDIENCE: set both/,
  );
});

test("bad variables are named with the fix", () => {
  const env = { ...base, OIDC_ISSUER: "https://id.example.com", OIDC_AUDIENCE: "gh" };
  assert.throws(
    () => loadConfig({ ...env, NATS_URL: "127.0.0.1:4222" }),
    /NATS_URL: expected nats:\/\/host:port/,
  );
  assert.throws(
    () => loadConfig({ ...env, OIDC_ROLE_MAP: "a=root" }),
    /OIDC_ROLE_MAP: expected "claimValue=role/,
  );
  assert.throws(() => loadConfig({ ...env, GATEWAY_ADDR: "8780" }), /GATEWAY_ADDR: must be host:port/);
  assert.throws(
    () => loadConfig({ ...env, OIDC_SCOPE: "profile email" }),
    /OIDC_SCOPE: the scopes must include "openid"/,
  );
  const ok = loadConfig({ ...env, OIDC_ROLE_MAP: "eng=approver,sec=auditor", OIDC_CLIENT_ID: "web" });
  assert.deepEqual(ok.oidc?.roleMap, { eng: "approver", sec: "auditor" });
  assert.equal(ok.oidc?.clientId, "web");
  assert.equal(ok.oidc?.scope, "openid profile email");
});

test("a dev tokens file with a short token or no role is refused, naming the field", () => {
  const dir = mkdtempSync(join(tmpdir(), "gw-config-"));
  const file = join(dir, "tokens.yaml");
  writeFileSync(file, "tokens:\n  - token: short\n    subject: a\n    roles: []\n");
  assert.throws(
    () => loadConfig({ ...base, GATEWAY_DEV_TOKENS_FILE: file }),
    /tokens\.0\.token: a dev token must be at least 16 characters[\s\S]*tokens\.0\.roles: give at least one role/,
  );
});

test("the MCP endpoint's knobs are validated, naming the variable and the fix", () => {
  const env = { ...base, OIDC_ISSUER: "https://id.example.com", OIDC_AUDIENCE: "gh" };
  const defaults = loadConfig(env);
  assert.deepEqual(defaults.mcp, { maxSessions: 1000, idleMs: 30 * 60_000, allowedOrigins: [] });
  assert.equal(defaults.publicUrl, undefined);
  const set = loadConfig({
    ...env,
    GATEWAY_PUBLIC_URL: "https://gatehouse.example.com/",
    GATEWAY_MCP_MAX_SESSIONS: "20",
    GATEWAY_MCP_IDLE_MINUTES: "5",
    GATEWAY_MCP_ALLOWED_ORIGINS: "https://agents.example.com,http://localhost:6274",
  });
  assert.equal(set.publicUrl, "https://gatehouse.example.com");
  assert.deepEqual(set.mcp, {
    maxSessions: 20,
    idleMs: 5 * 60_000,
    allowedOrigins: ["https://agents.example.com", "http://localhost:6274"],
  });
  assert.throws(
    () => loadConfig({ ...env, GATEWAY_PUBLIC_URL: "https://gatehouse.example.com/gh" }),
    /GATEWAY_PUBLIC_URL: expected an http\(s\) origin with no path/,
  );
  assert.throws(
    () => loadConfig({ ...env, GATEWAY_MCP_MAX_SESSIONS: "0" }),
    /GATEWAY_MCP_MAX_SESSIONS: expected at least 1 session/,
  );
  assert.throws(
    () => loadConfig({ ...env, GATEWAY_MCP_IDLE_MINUTES: "1.5" }),
    /GATEWAY_MCP_IDLE_MINUTES: expected whole minutes/,
  );
  assert.throws(
    () => loadConfig({ ...env, GATEWAY_MCP_ALLOWED_ORIGINS: "agents.example.com" }),
    /GATEWAY_MCP_ALLOWED_ORIGINS: expected comma-separated origins/,
  );
});

test("AGENT_ADDRESS is optional (unset: the chat routes answer agent_off) and must be host:port", () => {
  const env = { ...base, OIDC_ISSUER: "https://id.example.com", OIDC_AUDIENCE: "gh" };
  assert.equal(loadConfig(env).agentAddress, undefined);
  assert.equal(loadConfig({ ...env, AGENT_ADDRESS: "worker:7008" }).agentAddress, "worker:7008");
  assert.throws(
    () => loadConfig({ ...env, AGENT_ADDRESS: "worker" }),
    /AGENT_ADDRESS: must be host:port, e\.g\. worker:7008/,
  );
});
