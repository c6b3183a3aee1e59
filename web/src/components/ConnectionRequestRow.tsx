import type { ConnectionRequest } from "@gatehouse/gateway-contract";
import { type FormEvent, useState } from "react";
import { callerLabel, formatTime } from "../format.ts";
import { Visible } from "./Visible.tsx";

/** The requested URL split at its scope fragment: `base` stays, `fragment` (no "#") may be narrowed. */
export function splitUrl(url: string): { base: string; fragment: string } {
  const i = url.indexOf("#");
  return i < 0 ? { base: url, fragment: "" } : { base: url.slice(0, i), fragment: url.slice(i + 1) };
}

/** What a decider may do with a pending request; absent for auditors. */
export interface ConnectionDecision {
  /** `url`: the requested base with the chosen fragment; `name`: "" for the gatekeeper's default. */
  onAccept: (url: string, name: string) => void;
  onDecline: (reason: string) => void;
  busy: boolean;
}

/**
 * One pending connection request in the inbox: the URL, the agent's reason (untrusted, shown inert
 * with invisible characters marked), which chat asked and when; for deciders, Accept (with an
 * editable scope fragment and binding name) and Decline (a reason is required).
 */
export function ConnectionRequestRow({
  request,
  decision,
}: {
  request: ConnectionRequest;
  decision?: ConnectionDecision | undefined;
}) {
  const [mode, setMode] = useState<"idle" | "accept" | "decline">("idle");
  const { base, fragment: requested } = splitUrl(request.url);
  const [fragment, setFragment] = useState(requested);
  const [name, setName] = useState("");
  const [reason, setReason] = useState("");
  const accept = (event: FormEvent) => {
    event.preventDefault();
    if (!decision || decision.busy) return;
    const f = fragment.trim().replace(/^#/, "");
    decision.onAccept(f ? `${base}#${f}` : base, name.trim());
  };
  const decline = (event: FormEvent) => {
    event.preventDefault();
    if (decision && !decision.busy && reason.trim() !== "") decision.onDecline(reason.trim());
  };
  return (
    <li className="connection-row" data-testid="connection-request" data-request-id={request.id}>
      <div className="row-main">
        <span className="row-id">connection #{request.id}</span>
        <code className="row-title" data-testid="connection-url">
          <Visible text={request.url} />
        </code>
        <span className="muted" data-testid="connection-caller">
          <Visible text={callerLabel(request.caller)} />
        </span>
        <span className="muted">{formatTime(request.requestedAt)}</span>
        {decision && mode === "idle" && (
          <span className="buttons">
            <button
              type="button"
              className="primary"
              data-testid="connection-accept"
              onClick={() => setMode("accept")}
            >
              Accept…
            </button>
            <button type="button" data-testid="connection-decline" onClick={() => setMode("decline")}>
              Decline…
            </button>
          </span>
        )}
      </div>
      <p className="connection-reason" data-testid="connection-reason">
        <span className="muted">The agent says: </span>
        <Visible text={request.reason} />
      </p>
      {decision && mode === "accept" && (
        <form className="connection-form" onSubmit={accept}>
          <label>
            <span>
              Scope fragment (after <code>#</code>; narrow it, e.g. <code>tool=read_text_file</code>; empty =
              the whole resource)
            </span>
            <span className="fragment-input">
              <code>{base}#</code>
              <input
                data-testid="connection-fragment"
                value={fragment}
                maxLength={2000}
                onChange={(e) => setFragment(e.target.value)}
              />
            </span>
          </label>
          <label>
            <span>Binding name (optional, e.g. FILES)</span>
            <input
              data-testid="connection-name"
              value={name}
              maxLength={63}
              onChange={(e) => setName(e.target.value)}
            />
          </label>
          <div className="buttons">
            <button
              type="submit"
              className="primary"
              data-testid="connection-accept-confirm"
              disabled={decision.busy}
            >
              Accept and connect
            </button>
            <button type="button" onClick={() => setMode("idle")}>
              Cancel
            </button>
          </div>
        </form>
      )}
      {decision && mode === "decline" && (
        <form className="connection-form" onSubmit={decline}>
          <label>
            <span>Why decline? The agent reads this.</span>
            <textarea
              data-testid="connection-decline-reason"
              value={reason}
              maxLength={2000}
              rows={2}
              onChange={(e) => setReason(e.target.value)}
            />
          </label>
          <div className="buttons">
            <button
              type="submit"
              className="danger"
              data-testid="connection-decline-confirm"
              disabled={reason.trim() === "" || decision.busy}
            >
              Decline
            </button>
            <button type="button" onClick={() => setMode("idle")}>
              Cancel
            </button>
          </div>
        </form>
      )}
    </li>
  );
}
