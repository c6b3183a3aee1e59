import { type FormEvent, useEffect, useRef, useState } from "react";

/**
 * The reason form of a rejection. The confirm button stays disabled while the reason is blank;
 * Escape cancels. The textarea takes focus when the form opens.
 */
export function RejectForm({
  onConfirm,
  onCancel,
  busy = false,
  count = 1,
}: {
  onConfirm: (reason: string) => void;
  onCancel: () => void;
  busy?: boolean;
  count?: number;
}) {
  const [reason, setReason] = useState("");
  const area = useRef<HTMLTextAreaElement>(null);
  useEffect(() => area.current?.focus(), []);
  const submit = (event: FormEvent) => {
    event.preventDefault();
    if (reason.trim() !== "" && !busy) onConfirm(reason.trim());
  };
  return (
    <form className="reject-form" onSubmit={submit}>
      <label>
        Why reject{count > 1 ? ` these ${count}` : ""}? The agent and auditors read this.
        <textarea
          ref={area}
          data-testid="reject-reason"
          value={reason}
          maxLength={2000}
          rows={3}
          onChange={(e) => setReason(e.target.value)}
          onKeyDown={(e) => {
            if (e.key === "Escape") onCancel();
            if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) submit(e);
          }}
        />
      </label>
      <div className="buttons">
        <button
          type="submit"
          className="danger"
          data-testid="reject-confirm"
          disabled={reason.trim() === "" || busy}
        >
          Reject
        </button>
        <button type="button" onClick={onCancel}>
          Cancel
        </button>
      </div>
    </form>
  );
}
