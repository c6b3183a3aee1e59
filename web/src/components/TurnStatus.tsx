import type { ChatTurn } from "@gatehouse/gateway-contract";
import { Link } from "react-router-dom";
import { endReasonText } from "../chatView.ts";
import { actionPath } from "../format.ts";
import { Visible } from "./Visible.tsx";

/**
 * A turn's state under its entries: running (with its step count), waiting for people (the awaited
 * writes not decided yet, linked to their action pages), or ended (reason and message).
 */
export function TurnStatus({ workspaceId, turn }: { workspaceId: string; turn: ChatTurn }) {
  const tokens = `${turn.inputTokens + turn.outputTokens} tokens`;
  if (turn.state === "running")
    return (
      <p className="turn-state running" data-testid="turn-state" data-state="running" role="status">
        Working… step {turn.steps} of at most {turn.maxSteps}
      </p>
    );
  if (turn.state === "waiting")
    return (
      <p className="turn-state waiting" data-testid="turn-state" data-state="waiting" role="status">
        Waiting for people to decide{turn.awaiting.length > 0 ? ": " : ""}
        {turn.awaiting.map((id, i) => (
          <span key={id}>
            {i > 0 && ", "}
            <Link to={actionPath(workspaceId, id)} data-testid="awaited-link" data-action-id={id}>
              #{id}
            </Link>
          </span>
        ))}
        . The turn goes on once they are decided.
      </p>
    );
  return (
    <div
      className={`turn-state ended end-${turn.reason || "unknown"}`}
      data-testid="turn-state"
      data-state="ended"
      data-reason={turn.reason}
    >
      <strong>{endReasonText(turn.reason)}</strong>
      {turn.message && (
        <>
          {": "}
          <span data-testid="turn-message">
            <Visible text={turn.message} />
          </span>
        </>
      )}
      <span className="turn-meta">
        {" "}
        · {turn.steps} step(s), {tokens}
      </span>
    </div>
  );
}
