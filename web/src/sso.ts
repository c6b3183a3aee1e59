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

/** What the sign-in round trip carries: the page the person was on (e.g. a review link from a notification). */
interface SsoState {
  /** The hash route, e.g. "#/ws/w1/review?execution=e1". */
  route: string;
}

/** A hash route the app may return to after sign-in: an app route, never a `#token=` hand-over. */
function appRoute(route: unknown): string {
  return typeof route === "string" && route.startsWith("#/") && route.length <= 2048 ? route : "#/";
}

/**
 * Leaves for the provider's sign-in page; the browser comes back to this page with `?code=&state=`,
 * and to the route it left from (a review link opened before signing in opens that review page).
 */
export async function startSso(oidc: NonNullable<ClientConfig["oidc"]>): Promise<void> {
  const state: SsoState = { route: appRoute(window.location.hash) };
  await managerFor(oidc).signinRedirect({ state });
}

/** Whether this load is the provider's redirect back (`?code=…&state=…` or `?error=…`). */
export function returningFromSso(): boolean {
  const params = new URLSearchParams(window.location.search);
  return params.has("state") && (params.has("code") || params.has("error"));
}

/**
 * Completes the sign-in after the redirect back: exchanges the code (with the PKCE verifier), checks
 * the state, and returns the ID token; the query string is removed from the address bar and the route the
 * person left from (an app route only; else the inbox) is restored.
 * @throws Error with the provider's error description, or when the exchange fails.
 */
export async function finishSso(oidc: NonNullable<ClientConfig["oidc"]>): Promise<string> {
  let route = "#/";
  try {
    const user = await managerFor(oidc).signinRedirectCallback();
    route = appRoute((user.state as Partial<SsoState> | undefined)?.route);
    if (!user.id_token) throw new Error("the provider returned no ID token (is the openid scope granted?)");
    return user.id_token;
  } finally {
    window.history.replaceState(null, "", `${window.location.pathname}${route}`);
    // The hash router read the address before it changed: tell it, as the browser would on back/forward.
    window.dispatchEvent(new PopStateEvent("popstate"));
  }
}
