import { Link } from "react-router-dom";
import { actionPath } from "../format.ts";
import type { Outcome } from "../outcomes.ts";

/** Outcomes of this person's decisions, newest last; each can be dismissed. */
export function Toasts({ outcomes, onDismiss }: { outcomes: Outcome[]; onDismiss: (key: string) => void }) {
  if (outcomes.length === 0) return null;
  return (
    <ul className="toasts" aria-live="polite">
      {outcomes.map((o) => (
        <li key={o.key} className={`toast toast-${o.kind}`} data-testid="toast" data-kind={o.kind}>
          <Link to={actionPath(o.workspaceId, o.actionId)}>{o.text}</Link>
          <button type="button" className="link" onClick={() => onDismiss(o.key)} aria-label="Dismiss">
            ×
          </button>
        </li>
      ))}
    </ul>
  );
}
