/**
 * Rebuilds a git binding's overlay after the gatekeeper restarted, with the kit's
 * `restoreOverlayOnce`: every staged commit, createBranch and push that is not applied, failed or
 * rejected rejoins the overlay with its dependencies.
 */
import { type ApprovalQueue, restoreOverlayOnce } from "@gatehouse/gatekeeper-kit";
import { parseWritePayload } from "./apply.ts";
import type { BindingState, PendingGitWrite } from "./state.ts";

/** Restores `state` from the approval service once; later calls wait for the first. @throws ApprovalRefused. */
export function restoreOnce(
  state: BindingState,
  approval: ApprovalQueue,
  callerToken: string,
): Promise<void> {
  return restoreOverlayOnce(
    state,
    approval,
    callerToken,
    (json, localId) => ({ ...parseWritePayload(json), localId }) as PendingGitWrite,
  );
}
