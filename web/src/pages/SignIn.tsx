import { type FormEvent, useState } from "react";
import { ErrorBanner } from "../components/ErrorBanner.tsx";

/** The sign-in form: paste a token (OIDC access/ID token, or a dev token from `gatehouse dev`). */
export function SignIn({ message, onSignIn }: { message: string; onSignIn: (token: string) => void }) {
  const [token, setToken] = useState("");
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (token.trim() !== "") onSignIn(token.trim());
  };
  return (
    <main className="sign-in">
      <h1>Gatehouse</h1>
      <p>Sign in to review the actions your agents want to take.</p>
      {message && <ErrorBanner message={message} />}
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
