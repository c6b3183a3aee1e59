import type { AgentInfo, ChatsResponse, ChatTurnState } from "@gatehouse/gateway-contract";
import { useEffect, useMemo, useRef, useState } from "react";
import { Link, useNavigate, useParams } from "react-router-dom";
import { createCoalescer } from "../coalesce.ts";
import { AgentOffBanner } from "../components/AgentOffBanner.tsx";
import { isForbidden, NoAccess } from "../components/NoAccess.tsx";
import { Visible } from "../components/Visible.tsx";
import { chatPath, formatTime, workspacePath } from "../format.ts";
import { useLiveEvents, useSession, useWorkspaceName } from "../session.tsx";

/** A chat's last turn state for people. */
export function chatStateLabel(state: ChatTurnState | null): string {
  if (state === null) return "no message yet";
  if (state === "waiting") return "waiting for people";
  return state;
}

/**
 * The workspace's agent chats, newest first, and "New chat" (off, with the reason, when the
 * deployment runs no model). Re-read on notices of the workspace and on every (re)open of the
 * event stream.
 */
export function ChatsPage() {
  const workspaceId = useParams().ws ?? "";
  const { api, reportError } = useSession();
  const navigate = useNavigate();
  const workspaceName = useWorkspaceName(workspaceId);
  const [data, setData] = useState<ChatsResponse | null>(null);
  const [agent, setAgent] = useState<AgentInfo | null>(null);
  const [denied, setDenied] = useState(false);
  const [busy, setBusy] = useState(false);
  const report = useRef(reportError);
  report.current = reportError;

  const coalescer = useMemo(
    () =>
      createCoalescer(async () => {
        try {
          const [chats, info] = await Promise.all([api.chats(workspaceId), api.agent(workspaceId)]);
          setData(chats);
          setAgent(info);
          setDenied(false);
        } catch (e) {
          setDenied(isForbidden(e));
          report.current(e);
        }
      }),
    [api, workspaceId],
  );
  useEffect(() => {
    setData(null);
    coalescer.request("chats");
  }, [coalescer]);
  useLiveEvents((event) => {
    if (event.type === "open" || event.type === "resync") coalescer.request("chats");
    else if (event.type === "notice" && event.notice.workspaceId === workspaceId) {
      if (!data || (event.notice.type.startsWith("Chat") && event.notice.revision > data.revision))
        coalescer.request("chats");
    }
  });

  if (!data)
    return denied ? <NoAccess workspaceId={workspaceId} /> : <p className="muted">Loading the chats…</p>;

  const startChat = async () => {
    setBusy(true);
    try {
      const chat = await api.startChat(workspaceId);
      navigate(chatPath(workspaceId, chat.chatId));
    } catch (e) {
      reportError(e);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main className="chats">
      <nav className="crumbs">
        <Link to="/">Inbox</Link> › <span title={workspaceId}>{workspaceName}</span> › <strong>Chats</strong>{" "}
        · <Link to={workspacePath(workspaceId, "log")}>Log</Link> ·{" "}
        <Link to={workspacePath(workspaceId, "rules")}>Rules</Link>
      </nav>
      <h1>Agent chats in {workspaceName}</h1>
      {agent && !agent.enabled && <AgentOffBanner reason={agent.reason} />}
      <div className="toolbar">
        <button
          type="button"
          className="primary"
          data-testid="new-chat"
          disabled={busy || !agent?.enabled}
          onClick={() => void startChat()}
        >
          New chat
        </button>
        {agent?.enabled && (
          <span className="muted" data-testid="agent-model">
            Model: <Visible text={agent.model} />
          </span>
        )}
      </div>
      {data.chats.length === 0 && <p className="muted">No chats in this workspace yet.</p>}
      <ul className="rows chat-list" data-testid="chat-list">
        {data.chats.map((c) => (
          <li key={c.chatId} className="log-entry chat-row" data-testid="chat-row" data-chat-id={c.chatId}>
            <div className="row-main">
              <Link to={chatPath(workspaceId, c.chatId)} className="row-title" data-testid="chat-link">
                {c.title ? <Visible text={c.title} /> : <em>New chat</em>}
              </Link>
              <span className={`badge chat-state-${c.state ?? "none"}`} data-testid="chat-state">
                {chatStateLabel(c.state)}
              </span>
            </div>
            <div className="row-meta">
              by <Visible text={c.startedBy.replace(/^user:/, "")} /> · {formatTime(c.startedAt)} · {c.turns}{" "}
              turn(s) · <Visible text={c.model} />
            </div>
          </li>
        ))}
      </ul>
    </main>
  );
}
