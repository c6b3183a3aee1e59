import type { RemoveBindingResult } from "@gatehouse/gateway-contract";
import { useState } from "react";
import { Visible } from "./Visible.tsx";

/**
 * The workspace owner's control to take a binding back (shown to the owner only, whatever their
 * role; the gateway refuses anyone else). It always asks first, saying what happens: how many of the
 * binding's writes are still waiting (`waiting`: pending or approved, not yet applying) and are
 * rejected "binding removed", that their dependents cascade, and that later executions lose
 * `env.<binding>`. `onRemove(reason)` performs the removal and resolves with the gateway's answer.
 */
export function RemoveBinding(props: {
  binding: string;
  waiting: number;
  onRemove: (reason: string) => Promise<RemoveBindingResult | undefined>;
}) {
  const { binding, waiting, onRemove } = props;
  const [asking, setAsking] = useState(false);
  const [reason, setReason] = useState("");
  const [busy, setBusy] = useState(false);

  if (!asking) {
    return (
      <button type="button" className="danger" data-testid="remove-binding" onClick={() => setAsking(true)}>
        Remove binding…
      </button>
    );
  }
  const confirm = async () => {
    setBusy(true);
    try {
      if (await onRemove(reason.trim())) setAsking(false);
    } finally {
      setBusy(false);
    }
  };
  return (
    <div
      className="banner warn"
      role="alertdialog"
      data-testid="remove-binding-confirm"
      aria-label={`Remove ${binding}`}
    >
      <p>
        Remove{" "}
        <strong>
          <Visible text={binding} />
        </strong>{" "}
        from this workspace? Agents lose{" "}
        <code>
          env.
          <Visible text={binding} />
        </code>{" "}
        from their next execution; a running one fails at its next call on it. Its past reads and writes stay
        in the log.
      </p>
      <p data-testid="remove-binding-pending">
        {waiting === 0
          ? "No write of this binding is waiting for a decision."
          : `${waiting} waiting write(s) of this binding will be rejected ("binding removed"), and the writes that depend on them with them.`}
      </p>
      <label>
        Reason (optional){" "}
        <input
          data-testid="remove-binding-reason"
          value={reason}
          maxLength={500}
          onChange={(e) => setReason(e.target.value)}
        />
      </label>{" "}
      <button
        type="button"
        className="danger"
        data-testid="remove-binding-yes"
        disabled={busy}
        onClick={() => void confirm()}
      >
        Remove {binding}
      </button>{" "}
      <button type="button" data-testid="remove-binding-no" disabled={busy} onClick={() => setAsking(false)}>
        Cancel
      </button>
    </div>
  );
}
