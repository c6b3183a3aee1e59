/**
 * PrepareRevert for git: stages the inverse of an applied commit as a new commit action (the
 * approval service submits it; a person approves it like any other). The revert sets every path
 * the commit changed back to its content in the commit's parent (deleting paths the commit
 * added); its `base` is what the commit wrote, so a later change to those paths makes the revert
 * fail at apply naming them, never silently overwrite. Nothing is written here.
 *
 * Only commits can be reverted: a createBranch or push is refused (FAILED_PRECONDITION).
 * The revert is not added to the agent's overlay: it is a person's write, shown once applied.
 */
import { inlineSafe, oneLine } from "@gatehouse/gatekeeper-kit";
import { Delivery, type PrepareRevertRequest, type PrepareRevertResponse } from "@gatehouse/proto";
import { parseWritePayload } from "./apply.ts";
import { DEFAULT_LIMITS, type Limits } from "./binding.ts";
import { NotFound, NotRevertable } from "./errors.ts";
import { gitText } from "./git.ts";
import { branchExists, lsPaths, objectSize, readBlob, resolveCommit } from "./repo.ts";
import { parseGitResource, type ResourcePolicy } from "./resource-url.ts";
import { commitReview } from "./review.ts";
import type { CommitPayload, FileChange, GitState } from "./state.ts";
import { upstreamFor } from "./upstream.ts";
import { describeCommit } from "./writes.ts";

export interface RevertDeps {
  policy: ResourcePolicy;
  state: GitState;
  limits?: Limits;
}

/**
 * Builds the revert of applied action `req.actionId`: each changed path gets back its exact
 * earlier blob and mode (binary-safe), or is deleted if the commit added it.
 * @throws NotRevertable (not a commit, no sha in its result, a path that was not a file),
 *         NotFound (commit or branch gone), InvalidResourceUrl.
 */
export async function prepareRevert(
  req: PrepareRevertRequest,
  deps: RevertDeps,
): Promise<PrepareRevertResponse> {
  const limits = deps.limits ?? DEFAULT_LIMITS;
  const resource = parseGitResource(req.url, deps.policy);
  const staged = parseWritePayload(req.payloadJson);
  if (staged.kind === "createBranch" || staged.kind === "push") {
    throw new NotRevertable(
      `action ${req.actionId} is a ${staged.kind}; only commits can be reverted here (delete the branch or revert its commits by hand)`,
    );
  }
  let sha: unknown;
  try {
    sha = (JSON.parse(req.resultJson) as { sha?: unknown }).sha;
  } catch {
    sha = undefined;
  }
  if (typeof sha !== "string" || !/^[0-9a-f]{40,64}$/.test(sha)) {
    throw new NotRevertable(`action ${req.actionId} has no commit sha in its result; is it applied?`);
  }
  const gitDir = resource.gitDir;
  await upstreamFor(resource, deps.state.fetches).refresh(true);
  await resolveCommit(gitDir, sha);
  if (!(await branchExists(gitDir, staged.branch))) {
    throw new NotFound(`branch ${staged.branch} no longer exists; nothing to revert onto`);
  }
  const parentSha = await resolveCommit(gitDir, `${sha}^`);
  const tip = await resolveCommit(gitDir, staged.branch);
  const paths = staged.changes.map((c) => c.path);
  const [before, after] = await Promise.all([lsPaths(gitDir, parentSha, paths), lsPaths(gitDir, sha, paths)]);
  const changes: FileChange[] = [];
  /** What the approver sees: text diffs where both sides are text, a note otherwise. */
  const shown: FileChange[] = [];
  const base: Record<string, string | null> = {};
  const old = new Map<string, string | null | undefined>();
  for (const path of paths) {
    const prev = before.find((e) => e.path === path);
    const wrote = after.find((e) => e.path === path);
    base[path] = wrote?.sha ?? null;
    if (prev && prev.type !== "blob")
      throw new NotRevertable(`${path} was not a file before the commit; revert it by hand`);
    const textOf = async (sha: string) => {
      if ((await objectSize(gitDir, sha)) > limits.maxFileBytes) return undefined;
      const buf = await readBlob(gitDir, sha);
      return buf.includes(0) ? undefined : buf.toString("utf8");
    };
    const wroteText = wrote ? await textOf(wrote.sha) : null;
    old.set(path, wroteText);
    if (prev) {
      // The exact earlier blob and mode: binary files and the executable bit come back unchanged.
      const mode = prev.mode === "100755" ? "100755" : "100644";
      changes.push({ path, blob: prev.sha, mode });
      const prevText = await textOf(prev.sha);
      shown.push(
        prevText !== undefined && wroteText !== undefined
          ? { path, content: prevText }
          : { path, blob: prev.sha, mode },
      );
    } else {
      changes.push({ path, delete: true });
      shown.push({ path, delete: true });
    }
  }
  const subject = (await gitText(gitDir, ["log", "-1", "--format=%s", sha])).slice(0, 200);
  const payload: CommitPayload = {
    kind: "commit",
    branch: staged.branch,
    message: `Revert "${subject}"\n\nThis reverts commit ${sha}.`,
    changes,
    parent: tip,
    base,
  };
  const repoTitle = oneLine(resource.repoPath.split("/").pop() ?? "repo");
  const repoName = inlineSafe(repoTitle);
  const d = await describeCommit(
    { repoName, limits },
    { ...payload, changes: shown },
    old,
    `Revert commit ${sha} (action ${req.actionId}) on branch ${inlineSafe(staged.branch)} of ${repoName}: a new commit that restores ${changes.length} path(s) to their content before it.`,
  );
  const localId = deps.state.binding(req.workspaceId, req.binding).ids.next();
  return {
    localId,
    description: {
      title: `Revert ${sha.slice(0, 12)} on ${oneLine(staged.branch)}: ${oneLine(subject, 70)}`,
      description: d.description,
      descriptionIsComplete: d.complete,
      delivery: Delivery.DELIVERY_SIMULATE,
      dependsOn: [],
      implementsRevert: req.actionId,
      autoApprovable: false,
      actionKind: { tag: "git.revert", label: "Revert commit" },
      classifiedBy: "gatekeeper-git: a revert is a new commit",
      egress: resource.remote !== undefined,
      ...commitReview({ ...payload, changes: shown }, old, resource.remote?.url),
    },
    payloadJson: JSON.stringify(payload),
  };
}
