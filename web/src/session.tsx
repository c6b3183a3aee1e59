/**
 * The signed-in session shared by every page: who the person is, the API client, the live event
 * hub, the live inbox, error reporting and the record of this person's decisions.
 */
import type { Action, Me } from "@gatehouse/gateway-contract";
import { createContext, useContext, useEffect, useRef } from "react";
import type { Api } from "./api.ts";
import type { InboxStore } from "./inboxStore.ts";
import type { LiveEvent, LiveHub } from "./live.ts";

/** Everything a page needs from the session. */
export interface Session {
  me: Me;
  api: Api;
  hub: LiveHub;
  /** false while the event stream is reconnecting (what is shown may be behind). */
  liveUp: boolean;
  inbox: InboxStore;
  /** Shows an error in the banner (401s are handled by signing out, not shown). */
  reportError(e: unknown): void;
  /** Records a decision's answer: statuses update in place, outcomes are announced as they arrive. */
  decided(changed: Action[]): void;
  /** Lets pages feed fresh action states to the outcome toasts. */
  observed(actions: Action[]): void;
}

/** Context holding the session; provided by the app shell once /api/me answered. */
export const SessionContext = createContext<Session | null>(null);

/** The current session; only used below the app shell. */
export function useSession(): Session {
  const session = useContext(SessionContext);
  if (!session) throw new Error("useSession is used outside the signed-in app shell");
  return session;
}

/** Calls `listener` for every live event while the component is mounted (latest listener wins). */
export function useLiveEvents(listener: (event: LiveEvent) => void): void {
  const { hub } = useSession();
  const latest = useRef(listener);
  latest.current = listener;
  useEffect(() => hub.subscribe((event) => latest.current(event)), [hub]);
}

/** The workspace's name as the inbox knows it, else its id (pages show names, as the inbox does). */
export function useWorkspaceName(workspaceId: string): string {
  const { inbox } = useSession();
  return inbox.workspaces?.find((w) => w.id === workspaceId)?.name || workspaceId;
}
