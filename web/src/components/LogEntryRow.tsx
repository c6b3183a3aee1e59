import type { LogEntry } from "@gatehouse/gateway-contract";
import { showInvisible } from "@gatehouse/gateway-contract/invisible";
import { Link } from "react-router-dom";
import { actionPath, callerLabel, formatTime } from "../format.ts";
import { Markdown } from "../markdown.tsx";
import { ChatOwner } from "./ChatOwner.tsx";
import { StatusBadge } from "./StatusBadge.tsx";
import { Visible } from "./Visible.tsx";

/** One record of the log: an observation (read), an action (write) or a refusal. */
export function LogEntryRow({ entry, workspaceId }: { entry: LogEntry; workspaceId: string }) {
  return (
    <li
      className={`log-entry kind-${entry.kind}`}
      data-testid="log-entry"
      data-kind={entry.kind}
      data-id={entry.id}
    >
      <div className="row-main">
        <span className="row-id">#{entry.id}</span>
        <span className={`badge kind kind-${entry.kind}`}>{entry.kind}</span>
        <Body entry={entry} workspaceId={workspaceId} />
      </div>
    </li>
  );
}

function Body({ entry, workspaceId }: { entry: LogEntry; workspaceId: string }) {
  if (entry.kind === "observation") {
    const o = entry.observation;
    return (
      <>
        <span className="row-title">
          <Visible text={o.title} />
        </span>
        {o.containsRestrictedData && <span className="flag restricted">restricted</span>}
        <div className="row-meta">
          <span>
            <Visible text={o.binding} />
          </span>
          <code>
            <Visible text={o.kind} />
          </code>
          {o.page > 0 && <span>page {o.page}</span>}
          <span>
            <Visible text={callerLabel(o.caller)} />
            <ChatOwner startedBy={o.chatStartedBy} />
          </span>
          <span>{formatTime(o.recordedAt)}</span>
        </div>
        {o.description && (
          <details>
            <summary>description</summary>
            <Markdown text={o.description} />
          </details>
        )}
      </>
    );
  }
  if (entry.kind === "action") {
    const a = entry.action;
    return (
      <>
        <Link className="row-title" to={actionPath(workspaceId, a.id)}>
          {a.title ? <Visible text={a.title} /> : "(untitled)"}
        </Link>
        <StatusBadge status={a.status} />
        <div className="row-meta">
          <span>
            <Visible text={a.binding} />
          </span>
          {a.actionKind && (
            <span title={showInvisible(a.actionKind.tag)}>
              <Visible text={a.actionKind.label} />
            </span>
          )}
          <span>
            <Visible text={callerLabel(a.caller)} />
            <ChatOwner startedBy={a.chatStartedBy} />
          </span>
          {a.egress && <span className="flag egress">egress</span>}
          <span>{formatTime(a.submittedAt)}</span>
        </div>
        {a.reason && (
          <div className={`row-reason reason-${a.status}`}>
            <Visible text={a.reason} />
          </div>
        )}
      </>
    );
  }
  const r = entry.refusal;
  return (
    <>
      <span className="row-title">
        <Visible text={r.title} />
      </span>
      <div className="row-meta">
        <span>
          <Visible text={r.binding} />
        </span>
        <span>
          <Visible text={callerLabel(r.caller)} />
          <ChatOwner startedBy={r.chatStartedBy} />
        </span>
        <span>{formatTime(r.refusedAt)}</span>
      </div>
      <div className="row-reason reason-rejected">
        <Visible text={r.reason} />
      </div>
    </>
  );
}
