import assert from "node:assert/strict";
import { test } from "node:test";
import { OAuthProtectedResourceMetadataSchema } from "@modelcontextprotocol/sdk/shared/auth.js";
import { protectedResource } from "../src/mcp/protected-resource.ts";

test("the MCP endpoint's RFC 9728 metadata names the resource, the issuer, header bearer tokens and the sign-in scopes", () => {
  const r = protectedResource("https://gatehouse.example.com/", {
    issuer: "https://id.example.com",
    scope: "openid profile  roles",
  });
  assert.equal(r.resource, "https://gatehouse.example.com/mcp");
  assert.equal(r.metadataUrl, "https://gatehouse.example.com/.well-known/oauth-protected-resource/mcp");
  assert.deepEqual(OAuthProtectedResourceMetadataSchema.parse(r.metadata), {
    resource: "https://gatehouse.example.com/mcp",
    authorization_servers: ["https://id.example.com"],
    bearer_methods_supported: ["header"],
    scopes_supported: ["openid", "profile", "roles"],
    resource_name: "Gatehouse",
  });
  assert.equal(protectedResource("http://127.0.0.1:8780").metadata.authorization_servers, undefined);
});

test("the 401 challenge points at the metadata; a refused token adds invalid_token with a header-safe description", () => {
  const r = protectedResource("https://gatehouse.example.com");
  const pointer =
    'resource_metadata="https://gatehouse.example.com/.well-known/oauth-protected-resource/mcp"';
  assert.equal(r.challenge(), `Bearer ${pointer}`);
  assert.equal(
    r.challenge({ description: 'claim "iss" is wrong \\ é' }),
    `Bearer error="invalid_token", error_description="claim 'iss' is wrong ' ?", ${pointer}`,
  );
});
