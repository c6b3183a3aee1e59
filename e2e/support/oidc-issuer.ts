/**
 * A real OpenID Connect provider on loopback for the browser sign-in test: `oidc-provider` (a
 * certified OpenID Provider implementation from npm) with its development login and consent pages,
 * one public client using the authorization code flow with PKCE, and a `roles` scope. Any login name
 * signs in; names starting with "auditor" get the auditor role, others approver. It stands in for the
 * company's identity provider (Okta, Entra ID, Keycloak…), which cannot run here.
 */
import { createServer, type Server } from "node:http";
import Provider from "oidc-provider";

export interface OidcIssuer {
  issuer: string;
  close(): Promise<void>;
}

export async function startOidcIssuer(options: {
  port: number;
  clientId: string;
  redirectUri: string;
}): Promise<OidcIssuer> {
  const issuer = `http://127.0.0.1:${options.port}`;
  const provider = new Provider(issuer, {
    clients: [
      {
        client_id: options.clientId,
        token_endpoint_auth_method: "none",
        redirect_uris: [options.redirectUri],
        grant_types: ["authorization_code"],
        response_types: ["code"],
      },
    ],
    pkce: { required: () => true },
    scopes: ["openid", "profile", "roles"],
    claims: { openid: ["sub"], profile: ["name"], roles: ["roles"] },
    conformIdTokenClaims: false,
    features: { devInteractions: { enabled: true } },
    cookies: { keys: ["gatehouse-test-issuer-cookie-key"] },
    findAccount: async (_ctx: unknown, id: string) => ({
      accountId: id,
      claims: async () => ({
        sub: id,
        name: `Person ${id}`,
        roles: [id.startsWith("auditor") ? "auditor" : "approver"],
      }),
    }),
  });
  const server: Server = createServer(provider.callback());
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, "127.0.0.1", () => resolve());
  });
  return { issuer, close: () => new Promise<void>((r) => server.close(() => r())) };
}
