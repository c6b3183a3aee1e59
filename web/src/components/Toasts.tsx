import { Link } from "react-router-dom";
import { actionPath } from "../format.ts";
import type { Outcome } from "../outcomes.ts";
import { Visible } from "./Visible.tsx";

/** At most this many outcomes show at once (newest); the rest are counted. */
const MAX_SHOWN = 4;

/** Outcomes of this person's decisions, newest last; each can be dismissed, or all at once. */
export function Toasts({ outcomes, onDismiss }: { outcomes: Outcome[]; onDismiss: (key: string) => void }) {
  if (outcomes.length === 0) return null;
  const shown = outcomes.slice(-MAX_SHOWN);
  const hidden = outcomes.length - shown.length;
  return (
    <ul className="toasts" aria-live="polite">
      {hidden > 0 && <li className="toast toast-more">+{hidden} earlier</li>}
      {shown.map((o) => (
        <li key={o.key} className={`toast toast-${o.kind}`} data-testid="toast" data-kind={o.kind}>
          <Link to={actionPath(o.workspaceId, o.actionId)}>
            <Visible text={o.text} />
          </Link>
          <button type="button" className="link" onClick={() => onDismiss(o.key)} aria-label="Dismiss">
            ×
          </button>
        </li>
      ))}
      {outcomes.length > 1 && (
        <li className="toast toast-more">
          <button
            type="button"
            className="link"
            onClick={() => {
              for (const o of outcomes) onDismiss(o.key);
            }}
          >
            Dismiss all
          </button>
        </li>
      )}
    </ul>
  );
}
