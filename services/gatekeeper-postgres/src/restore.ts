/**
 * Rebuilds a PostgreSQL binding's overlay after the gatekeeper restarted, with the kit's
 * `restoreOverlayOnce`: every staged write that is not applied, failed or rejected rejoins the
 * overlay with its dependencies, so reads replay it again.
 */
import { type ApprovalQueue, restoreOverlayOnce } from "@gatehouse/gatekeeper-kit";
import { parsePayload } from "./apply.ts";
import type { BindingState } from "./state.ts";

/** Restores `state` from the approval service once; later calls wait for the first. @throws ApprovalRefused. */
export function restoreOnce(
  state: BindingState,
  approval: ApprovalQueue,
  callerToken: string,
): Promise<void> {
  return restoreOverlayOnce(state, approval, callerToken, (json, localId) => {
    const p = parsePayload(json);
    return p.kind === "write" ? { ...p, localId } : undefined;
  });
}
