/**
 * The live inbox of the session: read once, re-read per workspace on `notice` (coalesced: one read
 * in flight per workspace plus one queued), and re-read whole on every (re)open of the event
 * stream and on `resync`, so a pending action is never shown from a stale read as truth.
 */
import type { Action, InboxWorkspace } from "@gatehouse/gateway-contract";
import { useCallback, useEffect, useMemo, useRef, useState } from "react";
import type { Api } from "./api.ts";
import { createCoalescer } from "./coalesce.ts";
import { applyActions, mergeAll, mergeOne } from "./inboxMerge.ts";
import type { LiveHub } from "./live.ts";

const ALL = "*";

/** What the inbox store offers the pages. */
export interface InboxStore {
  /** null until the first read answered. */
  workspaces: InboxWorkspace[] | null;
  /** Re-reads one workspace, or every workspace when omitted. */
  refresh(workspaceId?: string): void;
  /** Shows a decision's answer at once. */
  apply(changed: Action[]): void;
}

/**
 * Keeps the inbox current. `onRead` sees every action of every read (for outcome toasts);
 * `onError` gets read failures.
 */
export function useInboxStore(
  api: Api,
  hub: LiveHub,
  onRead: (actions: Action[]) => void,
  onError: (e: unknown) => void,
): InboxStore {
  const [workspaces, setWorkspaces] = useState<InboxWorkspace[] | null>(null);
  const current = useRef<InboxWorkspace[] | null>(null);
  const callbacks = useRef({ onRead, onError });
  callbacks.current = { onRead, onError };

  const coalescer = useMemo(
    () =>
      createCoalescer(async (key) => {
        try {
          const response = await api.inbox(key === ALL ? undefined : key);
          let next: InboxWorkspace[];
          if (key === ALL) next = mergeAll(current.current, response.workspaces);
          else {
            next = current.current ?? [];
            for (const w of response.workspaces) next = mergeOne(next, w);
          }
          current.current = next;
          setWorkspaces(next);
          callbacks.current.onRead(response.workspaces.flatMap((w) => [...w.pending, ...w.recent]));
        } catch (e) {
          callbacks.current.onError(e);
        }
      }),
    [api],
  );

  useEffect(() => {
    coalescer.request(ALL);
    return hub.subscribe((event) => {
      if (event.type === "open" || event.type === "resync") coalescer.request(ALL);
      else if (event.type === "notice") {
        const known = current.current?.find((w) => w.id === event.notice.workspaceId);
        if (!known || event.notice.revision > known.revision) coalescer.request(event.notice.workspaceId);
      }
    });
  }, [coalescer, hub]);

  const refresh = useCallback((workspaceId?: string) => coalescer.request(workspaceId ?? ALL), [coalescer]);
  const apply = useCallback((changed: Action[]) => {
    current.current = applyActions(current.current, changed);
    setWorkspaces(current.current);
  }, []);

  return useMemo(() => ({ workspaces, refresh, apply }), [workspaces, refresh, apply]);
}
