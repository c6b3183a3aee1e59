import type { ActionStatus, ChatToolCallEntry } from "@gatehouse/gateway-contract";
import { Link } from "react-router-dom";
import { callHeadline, snippetOf } from "../chatView.ts";
import { actionPath } from "../format.ts";
import { StatusBadge } from "./StatusBadge.tsx";
import { Visible } from "./Visible.tsx";

/** What a tool call came to, for its summary line (`awaiting`: the turn's writes not decided yet). */
function outcomeOf(
  call: ChatToolCallEntry,
  awaiting: readonly number[],
): { label: string; className: string } {
  if (call.problem) return { label: "not run", className: "problem" };
  if (!call.result) return { label: "running", className: "running" };
  if (call.result.awaitedActionIds.some((id) => awaiting.includes(id)))
    return { label: "waits for people", className: "waiting" };
  return call.result.ok ? { label: "ok", className: "ok" } : { label: "error", className: "error" };
}

/**
 * One snippet the agent ran (or tried to), collapsed to its first line and outcome: open, it shows
 * the code (from the call's arguments), the problem when the call was malformed, and the result
 * text the model was given (console, return value or error). The writes it submitted link to their
 * action pages (the inbox rows), with their status when the inbox knows it. All text is shown
 * inert, invisible characters marked.
 */
export function ToolCallBlock({
  workspaceId,
  call,
  awaiting,
  statusOf,
}: {
  workspaceId: string;
  call: ChatToolCallEntry;
  /** The turn's awaited writes not decided yet (ChatTurn.awaiting). */
  awaiting: readonly number[];
  /** The status of an action as the inbox knows it (undefined: not in the inbox's view). */
  statusOf: (actionId: number) => ActionStatus | undefined;
}) {
  const { code, parsed } = snippetOf(call);
  const outcome = outcomeOf(call, awaiting);
  const awaited = new Set(call.result?.awaitedActionIds ?? []);
  return (
    <li className="chat-entry tool-call" data-testid="tool-call" data-tool-call-id={call.toolCallId}>
      <details className="snippet" data-testid="snippet">
        <summary>
          <span className={`snippet-outcome ${outcome.className}`} data-testid="snippet-outcome">
            {outcome.label}
          </span>{" "}
          <span className="snippet-tool">{call.toolName}</span>{" "}
          <code className="snippet-headline">
            <Visible text={callHeadline(call) || "(empty)"} />
          </code>
        </summary>
        <pre
          className="snippet-code"
          data-testid="snippet-code"
          title={parsed ? "" : "the arguments as sent"}
        >
          <Visible text={code} />
        </pre>
        {call.problem && (
          <p className="banner warn" data-testid="snippet-problem">
            Not run: <Visible text={call.problem} />
          </p>
        )}
        {call.result && !call.problem && (
          <pre className={`snippet-result ${call.result.ok ? "" : "failed"}`} data-testid="snippet-result">
            <Visible text={call.result.text} />
          </pre>
        )}
        {!call.result && !call.problem && <p className="muted">Running…</p>}
        {call.executionId && (
          <p className="row-meta">
            execution <code>{call.executionId}</code>
            {call.observationIds.length > 0 && ` · ${call.observationIds.length} read(s) recorded`}
          </p>
        )}
      </details>
      {call.actionIds.length > 0 && (
        <p className="chat-writes" data-testid="chat-writes">
          Writes:{" "}
          {call.actionIds.map((id) => {
            const status = statusOf(id);
            return (
              <span key={id} className="chat-write">
                <Link to={actionPath(workspaceId, id)} data-testid="write-link" data-action-id={id}>
                  #{id}
                </Link>
                {status && <StatusBadge status={status} />}
                {awaited.has(id) && <span className="flag warn">awaited</span>}
              </span>
            );
          })}
        </p>
      )}
    </li>
  );
}
