import type { Action } from "@gatehouse/gateway-contract";
import { showInvisible } from "@gatehouse/gateway-contract/invisible";
import { memo } from "react";
import { actionPath, callerLabel, formatTime } from "../format.ts";
import { ChatOwner } from "./ChatOwner.tsx";
import { RejectForm } from "./RejectForm.tsx";
import { StatusBadge } from "./StatusBadge.tsx";
import { Visible } from "./Visible.tsx";

/** Decision controls of a pending row; absent for decided rows and for auditors. */
export interface RowDecision {
  selected: boolean;
  onToggleSelect: () => void;
  /** Undecided (transitive) dependencies the approve would include. */
  undecided: number;
  onApprove: () => void;
  rejecting: boolean;
  onRejectOpen: () => void;
  onRejectCancel: () => void;
  onRejectConfirm: (reason: string) => void;
  busy: boolean;
}

/** Renders one row; {@link ActionRow} is its memoised export. */
function ActionRowView({
  action,
  focused = false,
  onFocus,
  decision,
}: {
  action: Action;
  focused?: boolean;
  onFocus?: () => void;
  decision?: RowDecision;
}) {
  return (
    <li
      className={`action-row${focused ? " focused" : ""}`}
      data-testid="action-row"
      data-action-id={action.id}
      data-workspace={action.workspaceId}
      data-status={action.status}
      data-focused={focused ? "true" : undefined}
      onFocus={onFocus}
    >
      <div className="row-main">
        {decision && (
          <input
            type="checkbox"
            data-testid="select"
            checked={decision.selected}
            onChange={decision.onToggleSelect}
            aria-label={`Select action ${action.id}`}
          />
        )}
        <span className="row-id">#{action.id}</span>
        {/* A plain hash link: react-router's <Link> looks up a <base> element for every link it
            renders, which walks the page once per row (seconds with thousands of rows). */}
        <a
          className="row-title"
          href={`#${actionPath(action.workspaceId, action.id)}`}
          data-testid="row-title"
        >
          <RowHeadline action={action} />
        </a>
        {action.risks?.length > 0 && (
          <span
            className="flag risk"
            data-testid="risk-badge"
            title={action.risks.map((r) => `${r.kind}: ${showInvisible(r.reason)}`).join("\n")}
          >
            {action.risks[0]?.kind}
            {action.risks.length > 1 ? ` +${action.risks.length - 1}` : ""}
          </span>
        )}
        {action.preflightWarnings?.length > 0 && (
          <span
            className="flag warn"
            data-testid="preflight-badge"
            title={action.preflightWarnings.map(showInvisible).join("\n")}
          >
            {action.preflightWarnings.length === 1
              ? "pre-flight warning"
              : `${action.preflightWarnings.length} pre-flight warnings`}
          </span>
        )}
        <StatusBadge status={action.status} />
      </div>
      <div className="row-meta">
        <span>
          <Visible text={action.binding} />
        </span>
        {action.actionKind && (
          <span title={showInvisible(action.actionKind.tag)}>
            <Visible text={action.actionKind.label} />
          </span>
        )}
        <span>
          <Visible text={callerLabel(action.caller)} />
          <ChatOwner startedBy={action.chatStartedBy} />
        </span>
        <span>{action.delivery}</span>
        {action.egress && <span className="flag egress">egress</span>}
        {action.dependsOn.length > 0 && (
          <span>
            {action.status === "pending" && decision?.undecided
              ? "needs "
              : action.status === "pending" && decision
                ? "dependencies decided: "
                : "depends on "}
            {action.dependsOn.map((d) => `#${d}`).join(", ")}
          </span>
        )}
        {action.outcomeUnknown && <span className="flag warn">outcome unknown</span>}
        <span>{formatTime(action.decidedAt || action.submittedAt)}</span>
      </div>
      {action.reason && (
        <div className={`row-reason reason-${action.status}`}>
          <Visible text={action.reason} />
        </div>
      )}
      {decision && action.status === "pending" && (
        <div className="row-actions">
          <button
            type="button"
            className="primary"
            data-testid="approve"
            disabled={decision.busy}
            onClick={decision.onApprove}
          >
            {decision.undecided > 0 ? `Approve with ${decision.undecided} earlier` : "Approve"}
          </button>
          <button type="button" data-testid="reject" disabled={decision.busy} onClick={decision.onRejectOpen}>
            Reject…
          </button>
        </div>
      )}
      {decision?.rejecting && (
        <RejectForm
          busy={decision.busy}
          onCancel={decision.onRejectCancel}
          onConfirm={decision.onRejectConfirm}
        />
      )}
    </li>
  );
}

/**
 * What the row says the action does: the gatekeeper's one-line summary, else the title; the title
 * follows in muted text when both are given and differ.
 */
function RowHeadline({ action }: { action: Action }) {
  const summary = action.summary ?? "";
  if (!summary) return action.title ? <Visible text={action.title} /> : <>(untitled)</>;
  return (
    <>
      <span data-testid="row-summary">
        <Visible text={summary} />
      </span>
      {action.title && action.title !== summary && (
        <span className="row-subtitle muted">
          {" "}
          · <Visible text={action.title} />
        </span>
      )}
    </>
  );
}

interface ActionRowProps {
  action: Action;
  focused?: boolean;
  onFocus?: () => void;
  decision?: RowDecision;
}

/**
 * Whether a row would render the same: the same action object (reads replace only the workspace
 * they re-read, so other workspaces keep their objects), focus and decision state. Callbacks are
 * not compared: they act on the row's action by key, so an older closure does the same thing.
 */
function sameRow(a: ActionRowProps, b: ActionRowProps): boolean {
  if (a.action !== b.action || !!a.focused !== !!b.focused || !a.decision !== !b.decision) return false;
  if (!a.decision || !b.decision) return true;
  return (
    a.decision.selected === b.decision.selected &&
    a.decision.undecided === b.decision.undecided &&
    a.decision.rejecting === b.decision.rejecting &&
    a.decision.busy === b.decision.busy
  );
}

/**
 * One action in the inbox (pending or recently decided): title linking to its detail, kind, caller,
 * delivery, egress flag, reason; approve/reject controls when `decision` is given. Memoised: with
 * 1,000 pending rows a notice for one workspace re-renders only that workspace's rows.
 */
export const ActionRow = memo(ActionRowView, sameRow);
