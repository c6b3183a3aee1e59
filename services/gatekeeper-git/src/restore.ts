/**
 * Rebuilds a git binding's state after the gatekeeper restarted, with the kit's
 * `restoreOverlayOnce`, from the approval service (the stream), never from process memory:
 *
 * - every staged commit, createBranch and push that is not applied, failed or rejected rejoins
 *   the overlay with its dependencies;
 * - every applied provisional id gets back what it became: a commit's `~N` its sha (so `~N` is
 *   still a ref for reads and createBranch), a createBranch's `~N` its branch, a push's `~N`
 *   "a push" (which names no revision).
 */
import { type ApprovalQueue, restoreOverlayOnce } from "@gatehouse/gatekeeper-kit";
import { parseWritePayload } from "./apply.ts";
import { isValidBranchName } from "./resource-url.ts";
import type { BindingState, PendingGitWrite } from "./state.ts";

const SHA = /^[0-9a-f]{40,64}$/;

/**
 * What an applied write's result_json says it became, as apply.ts writes it: a commit
 * `{sha, branch, rebased}`, a createBranch `{branch, sha}`, a push `{branch, remote, sha}`.
 * @returns the commit's sha for a commit; undefined otherwise (a branch or push is recorded in
 *   `state.settled`) and for a result this gatekeeper did not write.
 */
export function appliedAs(state: BindingState, localId: string, resultJson: string): string | undefined {
  let r: Record<string, unknown>;
  try {
    r = JSON.parse(resultJson) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (!r || typeof r !== "object" || typeof r.sha !== "string" || !SHA.test(r.sha)) return undefined;
  if (typeof r.remote === "string") {
    state.settled.set(localId, { kind: "push" });
    return undefined;
  }
  if ("rebased" in r) return r.sha;
  if (typeof r.branch === "string" && isValidBranchName(r.branch)) {
    state.settled.set(localId, { kind: "branch", name: r.branch });
  }
  return undefined;
}

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
    (localId, resultJson) => appliedAs(state, localId, resultJson),
  );
}
