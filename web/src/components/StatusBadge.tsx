import type { ActionStatus } from "@gatehouse/gateway-contract";

/** A coloured status label. */
export function StatusBadge({ status, testId }: { status: ActionStatus; testId?: string }) {
  return (
    <span className={`badge status-${status}`} data-testid={testId}>
      {status}
    </span>
  );
}
