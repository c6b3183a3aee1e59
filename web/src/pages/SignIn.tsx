import type { ClientConfig } from "@gatehouse/gateway-contract";
import { type FormEvent, useEffect, useState } from "react";
import { ErrorBanner } from "../components/ErrorBanner.tsx";
import { fetchClientConfig, startSso } from "../sso.ts";

/**
 * Sign-in: single sign-on with the company's OIDC provider when the gateway offers it, or a pasted
 * token (an OIDC ID token, or a dev token from `gatehouse dev`).
 */
export function SignIn({ message, onSignIn }: { message: string; onSignIn: (token: string) => void }) {
  const [token, setToken] = useState("");
  const [config, setConfig] = useState<ClientConfig | null>(null);
  const [ssoError, setSsoError] = useState("");
  useEffect(() => {
    fetchClientConfig()
      .then(setConfig)
      .catch(() => setConfig({ oidc: null, devTokens: true }));
  }, []);
  const sso = config?.oidc;
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (token.trim() !== "") onSignIn(token.trim());
  };
  return (
    <main className="sign-in">
      <h1>Gatehouse</h1>
      <p>Sign in to review the actions your agents want to take.</p>
      {message && <ErrorBanner message={message} />}
      {ssoError && <ErrorBanner message={ssoError} />}
      {sso && (
        <p>
          <button
            type="button"
            className="primary"
            data-testid="sso"
            onClick={() =>
              startSso(sso).catch((e: unknown) =>
                setSsoError(`Single sign-on could not start: ${e instanceof Error ? e.message : String(e)}`),
              )
            }
          >
            Sign in with single sign-on ({new URL(sso.issuer).host})
          </button>
        </p>
      )}
      <form onSubmit={submit}>
        <label>
          Token
          <input
            type="password"
            data-testid="token-input"
            autoComplete="off"
            spellCheck={false}
            value={token}
            onChange={(e) => setToken(e.target.value)}
            placeholder="Paste your access token"
          />
        </label>
        <button type="submit" className="primary" data-testid="sign-in" disabled={token.trim() === ""}>
          Sign in
        </button>
      </form>
      <p className="hint">
        The token stays in this tab only (session storage). A link ending in <code>#token=…</code> signs you
        in directly.
      </p>
    </main>
  );
}
