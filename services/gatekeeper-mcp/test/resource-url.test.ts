import assert from "node:assert/strict";
import { test } from "node:test";
import { InvalidRequest, InvalidResourceUrl, MalformedScopeFragment, UnknownServer } from "../src/errors.ts";
import { createRegistry, RegistryInvalid } from "../src/registry.ts";
import { bindingNameFor, isLoopbackHost, resolveResourceUrl } from "../src/resource-url.ts";

const registry = createRegistry({
  servers: {
    memory: { command: "node", args: ["server.js"], vetted: true, restrictedTools: ["read_graph"] },
  },
  endpoints: {
    everything: { url: "https://mcp.example.com/mcp", vetted: true },
    unvetted: { url: "https://other.example.com/mcp" },
  },
});

test("mcp://<registered-name> resolves to the registered stdio server with its vetting", () => {
  const r = resolveResourceUrl("mcp://memory#tool=read_graph", registry);
  assert.equal(r.target.kind, "stdio");
  assert.equal(r.trust, "vetted");
  assert.equal(r.normalizedUrl, "mcp://memory#tool=read_graph");
  assert.ok(r.restrictedTools.has("read_graph"));
});

test("an unregistered mcp:// name never launches anything: UnknownServer", () => {
  assert.throws(() => resolveResourceUrl("mcp://rm-rf", registry), UnknownServer);
});

test("mcp:// URLs cannot smuggle a command, path, port or user info", () => {
  for (const u of ["mcp://memory/extra", "mcp://memory:1234", "mcp://a@memory", "mcp://memory?cmd=sh"]) {
    assert.throws(() => resolveResourceUrl(u, registry), InvalidResourceUrl, u);
  }
});

test("a registered vetted https endpoint is vetted; a pasted unregistered one is byo", () => {
  assert.equal(resolveResourceUrl("https://mcp.example.com/mcp", registry).trust, "vetted");
  assert.equal(resolveResourceUrl("https://other.example.com/mcp", registry).trust, "byo");
  const byo = resolveResourceUrl("https://pasted.example.org/mcp#tool=x", registry);
  assert.equal(byo.trust, "byo");
  assert.equal(byo.serverName, "pasted.example.org");
  assert.equal(byo.normalizedUrl, "https://pasted.example.org/mcp#tool=x");
});

test("plain http is allowed only for loopback hosts", () => {
  for (const u of [
    "http://127.0.0.1:3001/mcp",
    "http://127.9.8.7/mcp",
    "http://[::1]:80/mcp",
    "http://localhost/mcp",
  ]) {
    assert.equal(resolveResourceUrl(u, registry).target.kind, "http", u);
  }
  for (const u of [
    "http://example.com/mcp",
    "http://10.0.0.1/mcp",
    "http://128.0.0.1/mcp",
    "http://127.0.0.1.evil.com/",
  ]) {
    assert.throws(() => resolveResourceUrl(u, registry), /plain http:\/\/ is refused/, u);
  }
  assert.ok(!isLoopbackHost("127.0.0.256"));
});

test("other schemes and user info are refused", () => {
  assert.throws(() => resolveResourceUrl("file:///etc/passwd", registry), InvalidResourceUrl);
  assert.throws(() => resolveResourceUrl("https://u:p@mcp.example.com/mcp", registry), /user info/);
});

test("server= must match the resource's registered server", () => {
  assert.equal(resolveResourceUrl("mcp://memory#server=memory", registry).scope.server, "memory");
  assert.throws(() => resolveResourceUrl("mcp://memory#server=other", registry), MalformedScopeFragment);
  assert.throws(
    () => resolveResourceUrl("https://pasted.example.org/mcp#server=everything", registry),
    MalformedScopeFragment,
  );
});

test("binding names are upper-cased and validated", () => {
  const r = resolveResourceUrl("https://pasted.example.org/mcp", registry);
  assert.equal(bindingNameFor(r, ""), "PASTED_EXAMPLE_ORG");
  assert.equal(bindingNameFor(r, "notes"), "NOTES");
  assert.throws(() => bindingNameFor(r, "9lives"), InvalidRequest);
  assert.equal(bindingNameFor(resolveResourceUrl("mcp://memory", registry), ""), "MEMORY");
});

test("an invalid registry names the field at fault", () => {
  assert.throws(() => createRegistry({ servers: { Bad: { command: "x" } } } as never), RegistryInvalid);
  assert.throws(() => createRegistry({ servers: { ok: { command: "" } } }), /servers\.ok\.command/);
  assert.throws(() => createRegistry({ endpoints: { e: { url: "https://a/b#tool=x" } } }), /fragment/);
});
