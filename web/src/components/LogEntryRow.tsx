import type { LogEntry } from "@gatehouse/gateway-contract";
import { Link } from "react-router-dom";
import { actionPath, callerLabel, formatTime } from "../format.ts";
import { Markdown } from "../markdown.tsx";
import { StatusBadge } from "./StatusBadge.tsx";

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
        <span className="row-title">{o.title}</span>
        {o.containsRestrictedData && <span className="flag restricted">restricted</span>}
        <div className="row-meta">
          <span>{o.binding}</span>
          <code>{o.kind}</code>
          {o.page > 0 && <span>page {o.page}</span>}
          <span>{callerLabel(o.caller)}</span>
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
          {a.title || "(untitled)"}
        </Link>
        <StatusBadge status={a.status} />
        <div className="row-meta">
          <span>{a.binding}</span>
          {a.actionKind && <span title={a.actionKind.tag}>{a.actionKind.label}</span>}
          <span>{callerLabel(a.caller)}</span>
          {a.egress && <span className="flag egress">egress</span>}
          <span>{formatTime(a.submittedAt)}</span>
        </div>
        {a.reason && <div className={`row-reason reason-${a.status}`}>{a.reason}</div>}
      </>
    );
  }
  const r = entry.refusal;
  return (
    <>
      <span className="row-title">{r.title}</span>
      <div className="row-meta">
        <span>{r.binding}</span>
        <span>{callerLabel(r.caller)}</span>
        <span>{formatTime(r.refusedAt)}</span>
      </div>
      <div className="row-reason reason-rejected">{r.reason}</div>
    </>
  );
}
