/**
 * The app: sign-in when there is no token, else the signed-in shell (header, error banner, outcome
 * toasts, live connection, inbox store) around the routes.
 */
import type { Action, Me } from "@gatehouse/gateway-contract";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import { Navigate, Route, Routes, useLocation } from "react-router-dom";
import { ApiRequestError, createApi, errorMessage } from "./api.ts";
import { clearToken, loadToken, saveToken } from "./auth.ts";
import { ErrorBanner } from "./components/ErrorBanner.tsx";
import { Header } from "./components/Header.tsx";
import { Toasts } from "./components/Toasts.tsx";
import { useInboxStore } from "./inboxStore.ts";
import { connectLive, createLiveHub } from "./live.ts";
import { type Outcome, OutcomeTracker } from "./outcomes.ts";
import { ActionDetailPage } from "./pages/ActionDetail.tsx";
import { ChatPage } from "./pages/Chat.tsx";
import { ChatsPage } from "./pages/Chats.tsx";
import { InboxPage } from "./pages/Inbox.tsx";
import { LogPage } from "./pages/Log.tsx";
import { NotificationsPage } from "./pages/Notifications.tsx";
import { ReviewPage } from "./pages/Review.tsx";
import { RulesPage } from "./pages/Rules.tsx";
import { SignIn } from "./pages/SignIn.tsx";
import { type Session, SessionContext } from "./session.tsx";
import { fetchClientConfig, finishSso, returningFromSso } from "./sso.ts";

const TOAST_MS = 12_000;

/** Root component: chooses between sign-in and the signed-in shell. */
export function App() {
  const [token, setToken] = useState<string | null>(loadToken);
  const [message, setMessage] = useState("");
  const [finishing, setFinishing] = useState(() => !loadToken() && returningFromSso());
  const signOut = useCallback((why: string) => {
    clearToken();
    setToken(null);
    setMessage(why);
  }, []);
  useEffect(() => {
    if (!finishing) return;
    // Back from the OIDC provider: trade the code for the ID token, then sign in with it.
    fetchClientConfig()
      .then((config) => {
        if (!config.oidc) throw new Error("the gateway no longer offers single sign-on");
        return finishSso(config.oidc);
      })
      .then((idToken) => {
        saveToken(idToken);
        setToken(idToken);
      })
      .catch((e: unknown) =>
        setMessage(`Single sign-on failed: ${e instanceof Error ? e.message : String(e)}`),
      )
      .finally(() => setFinishing(false));
  }, [finishing]);
  if (finishing) return <p className="muted loading">Signing in…</p>;
  if (!token) {
    return (
      <SignIn
        message={message}
        onSignIn={(t) => {
          saveToken(t);
          setMessage("");
          setToken(t);
        }}
      />
    );
  }
  return <Shell key={token} token={token} onSignOut={signOut} />;
}

function Shell({ token, onSignOut }: { token: string; onSignOut: (why: string) => void }) {
  const unauthorized = useCallback(
    (why: string) => onSignOut(`Signed out: ${why || "the gateway refused the token"}`),
    [onSignOut],
  );
  const api = useMemo(() => createApi(token, unauthorized), [token, unauthorized]);
  const hub = useMemo(() => createLiveHub(), []);
  const [me, setMe] = useState<Me | null>(null);
  const [error, setError] = useState<string | null>(null);
  const [liveUp, setLiveUp] = useState(false);
  const [toasts, setToasts] = useState<Outcome[]>([]);
  const tracker = useRef(new OutcomeTracker());

  const reportError = useCallback((e: unknown) => {
    if (e instanceof ApiRequestError && e.status === 401) return;
    setError(errorMessage(e));
  }, []);
  const announce = useCallback((outcomes: Outcome[]) => {
    if (outcomes.length === 0) return;
    setToasts((list) => [...list, ...outcomes].slice(-6));
    for (const o of outcomes)
      setTimeout(() => setToasts((list) => list.filter((t) => t.key !== o.key)), TOAST_MS);
  }, []);
  const observed = useCallback((actions: Action[]) => announce(tracker.current.observe(actions)), [announce]);
  const inbox = useInboxStore(api, hub, observed, reportError);
  const { apply, refresh } = inbox;
  const decided = useCallback(
    (changed: Action[]) => {
      setError(null);
      apply(changed);
      announce(tracker.current.record(changed));
      for (const w of new Set(changed.map((a) => a.workspaceId))) refresh(w);
    },
    [apply, refresh, announce],
  );

  const { pathname } = useLocation();
  useEffect(() => {
    // An error belongs to the page it happened on: moving to another page clears it.
    if (pathname) setError(null);
  }, [pathname]);
  useEffect(() => {
    api.me().then(setMe, reportError);
  }, [api, reportError]);
  useEffect(() => {
    const stop = hub.subscribe((event) => {
      if (event.type === "open") setLiveUp(true);
      else if (event.type === "down") setLiveUp(false);
    });
    const close = connectLive(token, hub, unauthorized);
    return () => {
      stop();
      close();
    };
  }, [hub, token, unauthorized]);

  const dismissToast = useCallback(
    (key: string) => setToasts((list) => list.filter((t) => t.key !== key)),
    [],
  );

  const session: Session | null = useMemo(
    () => (me ? { me, api, hub, liveUp, inbox, reportError, decided, observed } : null),
    [me, api, hub, liveUp, inbox, reportError, decided, observed],
  );

  return (
    <div className="app">
      {error && <ErrorBanner message={error} onDismiss={() => setError(null)} />}
      {session ? (
        <SessionContext.Provider value={session}>
          <Header me={session.me} liveUp={liveUp} onSignOut={() => onSignOut("")} />
          <Routes>
            <Route path="/" element={<InboxPage />} />
            <Route path="/ws/:ws/actions/:id" element={<ActionDetailPage />} />
            <Route path="/ws/:ws/log" element={<LogPage />} />
            <Route path="/ws/:ws/review" element={<ReviewPage />} />
            <Route path="/ws/:ws/rules" element={<RulesPage />} />
            <Route path="/ws/:ws/chats" element={<ChatsPage />} />
            <Route path="/ws/:ws/chats/:chat" element={<ChatPage />} />
            <Route path="/settings/notifications" element={<NotificationsPage />} />
            <Route path="*" element={<Navigate to="/" replace />} />
          </Routes>
          <Toasts outcomes={toasts} onDismiss={dismissToast} />
        </SessionContext.Provider>
      ) : (
        <p className="muted loading">Signing in…</p>
      )}
    </div>
  );
}
