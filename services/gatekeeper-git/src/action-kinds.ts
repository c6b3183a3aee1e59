/**
 * The action kinds a git binding can submit, as ResolveResource publishes them (so a person can
 * only enable auto-approval rules that could fire). The tags are those writes.ts and revert.ts put
 * on their descriptions. None is auto-approvable: every git write (a commit, a branch, a push, a
 * revert) changes a repository others share, so a person approves each one.
 */
import type { BindingActionKind } from "@gatehouse/proto";

const NEVER = "the git gatekeeper never marks its writes auto-approvable: each one needs a person";

/** commit, createBranch, push, revert: in the order the binding offers them. */
export const GIT_ACTION_KINDS: readonly BindingActionKind[] = [
  { tag: "git.commit", label: "Commit", autoApprovable: false, notAutoApprovableReason: NEVER },
  { tag: "git.createBranch", label: "Create branch", autoApprovable: false, notAutoApprovableReason: NEVER },
  { tag: "git.push", label: "Push", autoApprovable: false, notAutoApprovableReason: NEVER },
  { tag: "git.revert", label: "Revert commit", autoApprovable: false, notAutoApprovableReason: NEVER },
];
