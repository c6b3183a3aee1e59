/** Where the bearer token lives for the tab's lifetime. */
export const TOKEN_KEY = "gatehouse.token";

/**
 * Takes a token handed over in the URL fragment (`#token=<t>`) on first load: stores it in
 * sessionStorage and strips it from the address bar and history entry, so it is not left in the URL.
 * Returns the token, or null when the fragment carries none.
 */
export function takeTokenFromFragment(): string | null {
  const match = /^#token=([^&]+)/.exec(window.location.hash);
  if (!match?.[1]) return null;
  const token = decodeURIComponent(match[1]).trim();
  window.history.replaceState(null, "", `${window.location.pathname}${window.location.search}#/`);
  if (token === "") return null;
  saveToken(token);
  return token;
}

/** The stored token, or null when the person has not signed in in this tab. */
export function loadToken(): string | null {
  const token = window.sessionStorage.getItem(TOKEN_KEY);
  return token && token.trim() !== "" ? token : null;
}

/** Stores the token for this tab (sessionStorage: gone when the tab closes). */
export function saveToken(token: string): void {
  window.sessionStorage.setItem(TOKEN_KEY, token.trim());
}

/** Forgets the token (sign-out, or the gateway answered 401). */
export function clearToken(): void {
  window.sessionStorage.removeItem(TOKEN_KEY);
}
