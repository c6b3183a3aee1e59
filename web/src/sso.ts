/**
 * Browser sign-in with the company's OpenID Connect provider: the authorization code flow with PKCE
 * (RFC 7636) through oidc-client-ts. The gateway says whether and where (GET /api/config); the ID
 * token the provider returns becomes the bearer token the gateway verifies against the issuer's JWKS.
 */
import type { ClientConfig } from "@gatehouse/gateway-contract";
import { UserManager, WebStorageStateStore } from "oidc-client-ts";

/** Reads the gateway's sign-in configuration (no token needed). @throws Error when the gateway cannot be reached. */
export async function fetchClientConfig(): Promise<ClientConfig> {
  const response = await fetch("api/config", { cache: "no-store" });
  if (!response.ok) throw new Error(`the gateway answered ${response.status} to GET /api/config`);
  return (await response.json()) as ClientConfig;
}

function managerFor(oidc: NonNullable<ClientConfig["oidc"]>): UserManager {
  const here = `${window.location.origin}${window.location.pathname}`;
  return new UserManager({
    authority: oidc.issuer,
    client_id: oidc.clientId,
    redirect_uri: here,
    post_logout_redirect_uri: here,
    response_type: "code",
    scope: oidc.scope,
    // Tokens and the PKCE verifier live in this tab only.
    userStore: new WebStorageStateStore({ store: window.sessionStorage }),
    stateStore: new WebStorageStateStore({ store: window.sessionStorage }),
  });
}

/** Leaves for the provider's sign-in page; the browser comes back to this page with `?code=&state=`. */
export async function startSso(oidc: NonNullable<ClientConfig["oidc"]>): Promise<void> {
  await managerFor(oidc).signinRedirect();
}

/** Whether this load is the provider's redirect back (`?code=…&state=…` or `?error=…`). */
export function returningFromSso(): boolean {
  const params = new URLSearchParams(window.location.search);
  return params.has("state") && (params.has("code") || params.has("error"));
}

/**
 * Completes the sign-in after the redirect back: exchanges the code (with the PKCE verifier), checks
 * the state, and returns the ID token; the query string is removed from the address bar.
 * @throws Error with the provider's error description, or when the exchange fails.
 */
export async function finishSso(oidc: NonNullable<ClientConfig["oidc"]>): Promise<string> {
  try {
    const user = await managerFor(oidc).signinRedirectCallback();
    if (!user.id_token) throw new Error("the provider returned no ID token (is the openid scope granted?)");
    return user.id_token;
  } finally {
    window.history.replaceState(null, "", `${window.location.pathname}#/`);
  }
}
