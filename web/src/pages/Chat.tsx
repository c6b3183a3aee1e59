import type { ActionStatus, AgentInfo, Chat } from "@gatehouse/gateway-contract";
import { type FormEvent, useCallback, useEffect, useLayoutEffect, useMemo, useRef, useState } from "react";
import { Link, useParams } from "react-router-dom";
import { applyDelta, dropRecorded, type Streaming, streamingOf } from "../chatStream.ts";
import { lastTurn, ownsChat, turnOpen, turnsOf } from "../chatView.ts";
import { createCoalescer } from "../coalesce.ts";
import { AgentOffBanner } from "../components/AgentOffBanner.tsx";
import { isForbidden, NoAccess } from "../components/NoAccess.tsx";
import { ToolCallBlock } from "../components/ToolCallBlock.tsx";
import { TurnStatus } from "../components/TurnStatus.tsx";
import { Visible } from "../components/Visible.tsx";
import { formatTime, workspacePath } from "../format.ts";
import { Markdown } from "../markdown.tsx";
import { useLiveEvents, useSession, useWorkspaceName } from "../session.tsx";

const EMPTY: Streaming = new Map();
/** How close to the bottom (px) counts as following the conversation. */
const FOLLOW_PX = 120;
/** The longest message the gateway takes (gateway-contract CHAT_MESSAGE_MAX; not imported, to keep zod out of the bundle). */
const MESSAGE_MAX = 32_000;

/**
 * One agent chat: per turn the person's message, the model's answers (inert Markdown; while it
 * writes, its text streams in from `chat-delta` events and is replaced by the recorded answer),
 * each snippet it ran (collapsible: code, result, writes linked to their action pages), and the
 * turn's state. The chat's owner sends messages (not while a turn is open) and cancels an open
 * turn. Re-read on notices of the workspace past the revision shown, and on every (re)open.
 */
export function ChatPage() {
  const params = useParams();
  const workspaceId = params.ws ?? "";
  const chatId = params.chat ?? "";
  const { me, api, inbox, reportError } = useSession();
  const workspaceName = useWorkspaceName(workspaceId);
  const [chat, setChat] = useState<Chat | null>(null);
  const [agent, setAgent] = useState<AgentInfo | null>(null);
  const [denied, setDenied] = useState(false);
  const [streaming, setStreaming] = useState<Streaming>(EMPTY);
  const [draft, setDraft] = useState("");
  const [busy, setBusy] = useState(false);
  const current = useRef<Chat | null>(null);
  const report = useRef(reportError);
  report.current = reportError;

  const coalescer = useMemo(
    () =>
      createCoalescer(async () => {
        try {
          const next = await api.chat(workspaceId, chatId);
          current.current = next;
          setChat(next);
          setStreaming((s) => dropRecorded(s, next));
          setDenied(false);
        } catch (e) {
          setDenied(isForbidden(e));
          report.current(e);
        }
      }),
    [api, workspaceId, chatId],
  );
  const reload = useCallback(() => coalescer.request("chat"), [coalescer]);

  useEffect(() => {
    current.current = null;
    setChat(null);
    setStreaming(EMPTY);
    reload();
  }, [reload]);
  useEffect(() => {
    api.agent(workspaceId).then(setAgent, (e: unknown) => report.current(e));
  }, [api, workspaceId]);

  useLiveEvents((event) => {
    if (event.type === "open" || event.type === "resync") reload();
    else if (event.type === "notice" && event.notice.workspaceId === workspaceId) {
      if (!current.current || event.notice.revision > current.current.revision) reload();
    } else if (event.type === "chat-delta") {
      setStreaming((s) => applyDelta(s, current.current, event.delta));
    }
  });

  // Follow the conversation: when the person is at the bottom, new text keeps them there.
  const following = useRef(true);
  useEffect(() => {
    const onScroll = () => {
      following.current = window.innerHeight + window.scrollY >= document.body.scrollHeight - FOLLOW_PX;
    };
    window.addEventListener("scroll", onScroll, { passive: true });
    return () => window.removeEventListener("scroll", onScroll);
  }, []);
  // Runs after each change of what is shown (the chat read, the streamed text).
  const shown = useMemo(() => ({ chat, streaming }), [chat, streaming]);
  useLayoutEffect(() => {
    if (shown.chat && following.current) window.scrollTo({ top: document.body.scrollHeight });
  }, [shown]);

  const statusOf = useCallback(
    (actionId: number): ActionStatus | undefined => {
      const w = inbox.workspaces?.find((x) => x.id === workspaceId);
      return [...(w?.pending ?? []), ...(w?.recent ?? [])].find((a) => a.id === actionId)?.status;
    },
    [inbox.workspaces, workspaceId],
  );

  if (!chat)
    return denied ? <NoAccess workspaceId={workspaceId} /> : <p className="muted">Loading chat {chatId}…</p>;

  const open = turnOpen(chat);
  const mine = ownsChat(chat, me);
  const last = lastTurn(chat);
  const agentOff = agent !== null && !agent.enabled;
  const canSend = mine && !open && !agentOff && !busy;
  const title = chat.entries.find((e) => e.kind === "user")?.text ?? "";

  async function run(work: () => Promise<void>) {
    setBusy(true);
    try {
      await work();
    } catch (e) {
      reportError(e);
    } finally {
      setBusy(false);
      reload();
    }
  }
  const send = (e: FormEvent) => {
    e.preventDefault();
    const text = draft.trim();
    if (!text || !canSend) return;
    void run(async () => {
      await api.sendMessage(workspaceId, chatId, text);
      setDraft("");
    });
  };
  const cancel = () => {
    if (!last) return;
    void run(async () => {
      await api.cancelTurn(workspaceId, chatId, last.turnId);
    });
  };

  return (
    <main className="chat">
      <nav className="crumbs">
        <Link to="/">Inbox</Link> › <span title={workspaceId}>{workspaceName}</span> ›{" "}
        <Link to={workspacePath(workspaceId, "chats")}>Chats</Link> › <strong>Chat</strong> ·{" "}
        <Link to={workspacePath(workspaceId, "log")}>Log</Link>
      </nav>
      <h1 className="chat-title">{title ? <Visible text={title.slice(0, 120)} /> : "New chat"}</h1>
      <p className="row-meta">
        Started by <Visible text={chat.startedBy.replace(/^user:/, "")} /> · {formatTime(chat.startedAt)} ·
        model <Visible text={chat.model} />
      </p>
      {agentOff && <AgentOffBanner reason={agent.reason} />}
      {chat.turns.length === 0 && (
        <p className="muted">{mine ? "Send a message to start." : "No message in this chat yet."}</p>
      )}
      <ol className="chat-turns">
        {turnsOf(chat).map(({ turn, entries }) => (
          <li key={turn.turnId} className="chat-turn" data-testid="chat-turn" data-turn-id={turn.turnId}>
            <ol className="chat-entries">
              {entries.map((e) => {
                if (e.kind === "user")
                  return (
                    <li key={e.revision} className="chat-entry user" data-testid="user-message">
                      <div className="chat-who">
                        <Visible text={e.sentBy.replace(/^user:/, "")} />
                      </div>
                      <div className="chat-text">
                        <Visible text={e.text} />
                      </div>
                    </li>
                  );
                if (e.kind === "model")
                  return e.text ? (
                    <li
                      key={e.revision}
                      className="chat-entry model"
                      data-testid="model-message"
                      data-step={e.step}
                    >
                      <div className="chat-who">agent</div>
                      <Markdown text={e.text} />
                    </li>
                  ) : null;
                return (
                  <ToolCallBlock
                    key={e.revision}
                    workspaceId={workspaceId}
                    call={e}
                    awaiting={turn.state === "waiting" ? turn.awaiting : []}
                    statusOf={statusOf}
                  />
                );
              })}
              {streamingOf(streaming, turn.turnId).map((s) => (
                <li
                  key={`${s.turnId}:${s.step}`}
                  className="chat-entry model streaming"
                  data-testid="model-streaming"
                  data-step={s.step}
                  aria-busy="true"
                >
                  <div className="chat-who">agent (writing…)</div>
                  <Markdown text={s.text} />
                </li>
              ))}
            </ol>
            <TurnStatus workspaceId={workspaceId} turn={turn} />
          </li>
        ))}
      </ol>
      {mine ? (
        <form className="chat-send" onSubmit={send}>
          <textarea
            data-testid="chat-input"
            value={draft}
            rows={3}
            maxLength={MESSAGE_MAX}
            placeholder={open ? "The agent is working on the last message…" : "Ask the agent…"}
            disabled={!canSend}
            onChange={(e) => setDraft(e.target.value)}
            onKeyDown={(e) => {
              if (e.key === "Enter" && (e.metaKey || e.ctrlKey)) send(e);
            }}
          />
          <div className="buttons">
            <button
              type="submit"
              className="primary"
              data-testid="chat-send"
              disabled={!canSend || !draft.trim()}
            >
              Send
            </button>
            {open && (
              <button
                type="button"
                className="danger"
                data-testid="chat-cancel"
                disabled={busy}
                onClick={cancel}
              >
                Cancel turn
              </button>
            )}
          </div>
        </form>
      ) : (
        <p className="muted" data-testid="not-owner">
          Only <Visible text={chat.startedBy.replace(/^user:/, "")} /> can send to this chat.
        </p>
      )}
    </main>
  );
}
