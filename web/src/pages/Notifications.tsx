import type { NotificationPreferencesResponse, NotificationScope } from "@gatehouse/gateway-contract";
import { type FormEvent, useEffect, useState } from "react";
import { errorMessage } from "../api.ts";
import { useSession } from "../session.tsx";

/** The scope a person starts from when they have none: every workspace, nothing chosen. */
const ALL: NotificationScope = { workspace: "*", email: false, webhooks: [] };

/**
 * The signed-in person's notification preferences (GET/PUT /api/me/notifications): their address, and
 * per workspace (or `*` for all of them) whether to get an email and which of the administrator's
 * registered webhooks to post to, when an agent's turn leaves writes waiting for their review. A refusal
 * (a bad address, an unknown webhook) is shown next to the Save button, where the person is looking.
 */
export function NotificationsPage() {
  const { api } = useSession();
  const [loaded, setLoaded] = useState<NotificationPreferencesResponse | null>(null);
  const [email, setEmail] = useState("");
  const [scopes, setScopes] = useState<NotificationScope[]>([ALL]);
  const [status, setStatus] = useState<{ kind: "saved" | "error" | "saving"; text: string } | null>(null);

  useEffect(() => {
    api.notifications().then(
      (p) => {
        setLoaded(p);
        setEmail(p.email);
        setScopes(p.scopes.length > 0 ? p.scopes : [ALL]);
      },
      (e: unknown) => setStatus({ kind: "error", text: errorMessage(e) }),
    );
  }, [api]);

  const change = (i: number, patch: Partial<NotificationScope>) =>
    setScopes((all) => all.map((s, j) => (j === i ? { ...s, ...patch } : s)));
  const toggleHook = (i: number, name: string, on: boolean) =>
    setScopes((all) =>
      all.map((s, j) =>
        j === i ? { ...s, webhooks: on ? [...s.webhooks, name] : s.webhooks.filter((w) => w !== name) } : s,
      ),
    );
  const save = (event: FormEvent) => {
    event.preventDefault();
    setStatus({ kind: "saving", text: "Saving…" });
    api.setNotifications({ email: email.trim(), scopes }).then(
      (p) => {
        setLoaded(p);
        setStatus({ kind: "saved", text: "Saved." });
      },
      (e: unknown) => setStatus({ kind: "error", text: errorMessage(e) }),
    );
  };

  if (!loaded) {
    return (
      <main className="notifications">{status ? <p role="alert">{status.text}</p> : <p>Loading…</p>}</main>
    );
  }
  return (
    <main className="notifications" data-testid="notifications-page">
      <h1>Notifications</h1>
      <p className="hint">
        When an agent's turn leaves writes waiting for your review, Gatehouse can tell you once per turn, with
        a link to that turn's review page (you sign in there; the link approves nothing).
        {!loaded.emailAvailable &&
          " Email is not configured on this installation: email choices are kept but not sent."}
      </p>
      <form onSubmit={save} noValidate>
        <label>
          Email address{" "}
          <input
            type="email"
            data-testid="notify-email"
            value={email}
            onChange={(e) => setEmail(e.target.value)}
            placeholder="you@example.com"
          />
        </label>
        <table>
          <thead>
            <tr>
              <th>Workspace (* = all)</th>
              <th>Email</th>
              <th>Webhooks</th>
              <th />
            </tr>
          </thead>
          <tbody>
            {scopes.map((s, i) => (
              // biome-ignore lint/suspicious/noArrayIndexKey: rows are edited in place and have no id of their own
              <tr key={i} data-testid="notify-scope">
                <td>
                  <input
                    aria-label="workspace"
                    data-testid="notify-workspace"
                    value={s.workspace}
                    onChange={(e) => change(i, { workspace: e.target.value })}
                  />
                </td>
                <td>
                  <input
                    type="checkbox"
                    aria-label="email"
                    data-testid="notify-scope-email"
                    checked={s.email}
                    onChange={(e) => change(i, { email: e.target.checked })}
                  />
                </td>
                <td>
                  {loaded.webhooksAvailable.length === 0 && <span className="muted">none registered</span>}
                  {loaded.webhooksAvailable.map((name) => (
                    <label key={name} className="notify-hook">
                      <input
                        type="checkbox"
                        data-testid={`notify-hook-${name}`}
                        checked={s.webhooks.includes(name)}
                        onChange={(e) => toggleHook(i, name, e.target.checked)}
                      />{" "}
                      {name}
                    </label>
                  ))}
                </td>
                <td>
                  <button type="button" onClick={() => setScopes((all) => all.filter((_, j) => j !== i))}>
                    Remove
                  </button>
                </td>
              </tr>
            ))}
          </tbody>
        </table>
        <p>
          <button type="button" onClick={() => setScopes((all) => [...all, { ...ALL, workspace: "" }])}>
            Add a workspace
          </button>{" "}
          <button
            type="submit"
            className="primary"
            data-testid="notify-save"
            disabled={status?.kind === "saving"}
          >
            Save
          </button>{" "}
          {status && (
            <span
              data-testid="notify-status"
              role={status.kind === "error" ? "alert" : "status"}
              className={status.kind === "error" ? "error" : "muted"}
            >
              {status.text}
            </span>
          )}
        </p>
      </form>
    </main>
  );
}
