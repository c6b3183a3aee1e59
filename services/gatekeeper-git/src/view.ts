/**
 * The pending view of a binding: a fold over its overlay, in submission order, giving for each
 * branch the changes pending commits made (path -> content, null = deleted; latest wins) and the
 * pending commits themselves. A branch created by a pending createBranch starts at its real
 * `fromCommit` plus the pending changes of the branch it came from, as they were at that point.
 */
import type { PendingOverlay } from "@gatehouse/gatekeeper-kit";
import type { PendingCommit, PendingGitWrite } from "./state.ts";

/** The pending state of one branch. */
export interface BranchView {
  /** Set when the branch itself is pending (created by createBranch ~N): its real start commit. */
  createdAt: { localId: string; commit: string } | undefined;
  /** Path -> content after every pending commit (null = deleted). */
  changes: Map<string, string | null>;
  /** Pending commits visible on the branch, oldest first (inherited ones first). */
  commits: PendingCommit[];
}

/** Branch name -> view. */
export type PendingViews = Map<string, BranchView>;

/**
 * Folds `overlay` into per-branch views, stopping after `untilLocalId` when given (the view "as
 * of" a pending write). A pending branch created from a pending commit starts from that commit's
 * view as it was then (later commits on the source branch are not inherited); once that commit is
 * applied (`appliedSha` knows its real sha), the branch starts at that sha and inherits nothing.
 */
export function pendingViews(
  overlay: PendingOverlay<PendingGitWrite>,
  untilLocalId?: string,
  appliedSha: (localId: string) => string | undefined = () => undefined,
): PendingViews {
  const views: PendingViews = new Map();
  const get = (b: string) => {
    let v = views.get(b);
    if (!v) {
      v = { createdAt: undefined, changes: new Map(), commits: [] };
      views.set(b, v);
    }
    return v;
  };
  for (const { localId, write } of overlay.pending()) {
    if (write.kind === "createBranch") {
      const sha = write.fromPending !== undefined ? appliedSha(write.fromPending) : undefined;
      const from =
        write.fromBranch !== undefined && write.fromPending !== undefined && sha === undefined
          ? sourceView(overlay, views, write.fromBranch, write.fromPending, appliedSha)
          : undefined;
      views.set(write.name, {
        createdAt: { localId, commit: sha ?? write.fromCommit },
        changes: new Map(from?.changes ?? []),
        commits: [...(from?.commits ?? [])],
      });
    } else if (write.kind !== "push") {
      const v = get(write.branch);
      for (const ch of write.changes) {
        if ("delete" in ch) v.changes.set(ch.path, null);
        else if ("content" in ch) v.changes.set(ch.path, ch.content);
      }
      v.commits.push(write);
    }
    if (localId === untilLocalId) break;
  }
  return views;
}

/** The view of `branch` as of its pending commit `until` (the current one when `until` is its tip). */
function sourceView(
  overlay: PendingOverlay<PendingGitWrite>,
  views: PendingViews,
  branch: string,
  until: string,
  appliedSha: (localId: string) => string | undefined,
): BranchView | undefined {
  const now = views.get(branch);
  // `until` not pending (applied but its sha unknown here): the source's current view, as before.
  if (!now || now.commits[now.commits.length - 1]?.localId === until || !overlay.has(until)) return now;
  return pendingViews(overlay, until, appliedSha).get(branch);
}

/** The view of `branch` (empty when nothing is pending on it). */
export function viewOf(views: PendingViews, branch: string | undefined): BranchView {
  return (
    (branch !== undefined ? views.get(branch) : undefined) ?? {
      createdAt: undefined,
      changes: new Map(),
      commits: [],
    }
  );
}
