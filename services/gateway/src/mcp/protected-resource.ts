/**
 * The `/mcp` endpoint as an OAuth 2.1 protected resource (MCP specification 2025-11-25,
 * "Authorization"): its metadata document (RFC 9728) naming the OIDC issuer the gateway trusts, and
 * the `WWW-Authenticate` challenge (RFC 6750 §3, RFC 9728 §5.1) of a 401, which points clients at
 * that document.
 */
import type { OAuthProtectedResourceMetadata } from "@modelcontextprotocol/sdk/shared/auth.js";

/** Where the MCP endpoint is served. */
export const MCP_PATH = "/mcp";

/** The well-known path of protected-resource metadata (RFC 9728 §3). */
export const METADATA_PATH = "/.well-known/oauth-protected-resource";

/** What a client needs to know about the protected resource. */
export interface ProtectedResource {
  /** The resource identifier: the MCP endpoint's public URL, e.g. "https://gatehouse.example.com/mcp". */
  resource: string;
  /** The metadata document's URL, with the resource path inserted (RFC 9728 §3.1): "<origin>/.well-known/oauth-protected-resource/mcp". */
  metadataUrl: string;
  /** The metadata document served at {@link METADATA_PATH} and `${METADATA_PATH}/mcp`. */
  metadata: OAuthProtectedResourceMetadata;
  /**
   * The `WWW-Authenticate` value of a 401: `Bearer resource_metadata="…"`, plus
   * `error="invalid_token", error_description="…"` when a token was sent and refused.
   */
  challenge(refused?: { description: string }): string;
}

/**
 * Describes the MCP endpoint of a gateway reachable at `publicOrigin`.
 * @param publicOrigin The gateway's public origin, "scheme://host[:port]" without a path.
 * @param oidc The issuer the gateway trusts (absent with dev tokens only: no authorization server is
 *   named, and clients must send a token they were given) and the scopes its sign-in asks for.
 */
export function protectedResource(
  publicOrigin: string,
  oidc?: { issuer: string; scope?: string },
): ProtectedResource {
  const origin = new URL(publicOrigin).origin;
  const resource = `${origin}${MCP_PATH}`;
  const metadataUrl = `${origin}${METADATA_PATH}${MCP_PATH}`;
  const metadata: OAuthProtectedResourceMetadata = {
    resource,
    ...(oidc ? { authorization_servers: [oidc.issuer] } : {}),
    bearer_methods_supported: ["header"],
    ...(oidc?.scope ? { scopes_supported: oidc.scope.split(/\s+/).filter(Boolean) } : {}),
    resource_name: "Gatehouse",
  };
  return {
    resource,
    metadataUrl,
    metadata,
    challenge(refused) {
      const parts = refused
        ? [`error="invalid_token"`, `error_description="${quotable(refused.description)}"`]
        : [];
      parts.push(`resource_metadata="${metadataUrl}"`);
      return `Bearer ${parts.join(", ")}`;
    },
  };
}

/** Text fit for an RFC 7230 quoted-string in a header: printable ASCII without `"` or `\`. */
function quotable(text: string): string {
  return text.replace(/["\\]/g, "'").replace(/[^\x20-\x7e]/g, "?");
}
