/**
 * ApplyAction for git: writes the staged commit onto its branch with plumbing (a temporary index,
 * hash-object, update-index, write-tree, commit-tree, and a compare-and-swap update-ref). At most
 * once per action id in this process: a second ApplyAction of the same id returns the first
 * outcome and writes nothing. Applies on one repository are serialized.
 *
 * Rebase rule: every changed path must still hold, at the branch tip, the content the agent based
 * the change on (`payload.base`). Then the changes are applied on the tip (a clean rebase when
 * the branch moved); otherwise the action fails naming the conflicting paths. The result's
 * `rebased` is true whenever the tip differed from the payload's `parent` (also when the tip is an
 * earlier approved commit of the same chain). A failed apply drops the commit and its dependents
 * from the overlay. Assumes sha1 object format.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ApplyActionRequest, ApplyActionResponse } from "@gatehouse/proto";
import type { Logger } from "pino";
import { InvalidRequest } from "./errors.ts";
import { GitFailed, git, gitText } from "./git.ts";
import { branchExists, lsPaths, resolveCommit } from "./repo.ts";
import { isValidBranchName, parseGitResource } from "./resource-url.ts";
import { checkScopedPath } from "./scope.ts";
import type { CommitPayload, FileChange, GitState } from "./state.ts";

/**
 * Parses `payload_json` as staged by `commit`.
 * @throws InvalidRequest naming payload_json.
 */
export function parseCommitPayload(json: string): CommitPayload {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    throw new InvalidRequest("payload_json is not JSON; it must be the payload gatekeeper-git staged");
  }
  const p = v as Partial<CommitPayload> | null;
  const ok =
    p &&
    typeof p === "object" &&
    typeof p.branch === "string" &&
    isValidBranchName(p.branch) &&
    typeof p.message === "string" &&
    typeof p.parent === "string" &&
    /^[0-9a-f]{40,64}$/.test(p.parent) &&
    p.base &&
    typeof p.base === "object" &&
    Array.isArray(p.changes) &&
    p.changes.every(
      (c: FileChange) =>
        c &&
        typeof c.path === "string" &&
        (("content" in c && typeof c.content === "string") || ("delete" in c && c.delete === true)) &&
        (p.base as Record<string, unknown>)[c.path] !== undefined,
    );
  if (!ok)
    throw new InvalidRequest(
      "payload_json must be {branch, message, changes, parent, base} as staged by gatekeeper-git",
    );
  return p as CommitPayload;
}

export interface ApplyDeps {
  allowedRoots: readonly string[];
  state: GitState;
  logger: Logger;
}

/** Performs one approved commit action. @throws InvalidRequest / resource errors before any write. */
export function applyAction(req: ApplyActionRequest, deps: ApplyDeps): Promise<ApplyActionResponse> {
  const key = `${req.workspaceId}\u0000${req.binding}\u0000${req.actionId}`;
  const had = deps.state.applied.get(key);
  if (had) return had;
  const resource = parseGitResource(req.url, deps.allowedRoots);
  const payload = parseCommitPayload(req.payloadJson);
  for (const c of payload.changes) checkScopedPath(resource.pathPrefix, c.path, "a staged change path");
  if (resource.branch !== undefined && payload.branch !== resource.branch) {
    throw new InvalidRequest(`the staged branch is outside this binding's #branch=${resource.branch}`);
  }
  const run = deps.state.serialize(resource.gitDir, () => writeCommit(resource.gitDir, payload));
  deps.state.applied.set(key, run);
  const log = deps.logger.child({ component: "apply", workspaceId: req.workspaceId, actionId: req.actionId });
  return run.then((res) => {
    const st = deps.state.binding(req.workspaceId, req.binding);
    if (res.ok) {
      const sha = (JSON.parse(res.resultJson) as { sha: string }).sha;
      st.overlay.settle(req.localId);
      if (st.ids.issued(req.localId)) st.ids.alias(req.localId, sha);
      log.info(
        { event: "apply.ok", rebased: (JSON.parse(res.resultJson) as { rebased: boolean }).rebased },
        "commit written",
      );
    } else {
      st.overlay.drop(req.localId);
      log.info({ event: "apply.failed" }, "commit not written");
    }
    return res;
  });
}

async function writeCommit(gitDir: string, p: CommitPayload): Promise<ApplyActionResponse> {
  if (!(await branchExists(gitDir, p.branch))) {
    return { ok: false, resultJson: "", error: `branch ${p.branch} no longer exists; nothing was committed` };
  }
  const tip = await resolveCommit(gitDir, p.branch);
  const paths = p.changes.map((c) => c.path);
  const ancestorsOf = (path: string) =>
    path
      .split("/")
      .slice(0, -1)
      .map((_, i, parts) => parts.slice(0, i + 1).join("/"));
  const now = await lsPaths(gitDir, tip, [...new Set(paths.flatMap((x) => [...ancestorsOf(x), x]))]);
  // A conflict: the path's content moved away from what the agent saw, or a parent directory
  // became a file (git would otherwise silently replace that file with the directory).
  const conflicts = paths.filter(
    (path) =>
      (now.find((e) => e.path === path)?.sha ?? null) !== p.base[path] ||
      ancestorsOf(path).some((a) => now.some((e) => e.path === a && e.type !== "tree")),
  );
  if (conflicts.length > 0) {
    return {
      ok: false,
      resultJson: "",
      error: `branch ${p.branch} moved and these paths changed since the commit was made: ${conflicts.join(", ")}; nothing was committed`,
    };
  }
  try {
    return await writeOnTip(gitDir, p, tip);
  } catch (e) {
    if (!(e instanceof GitFailed)) throw e;
    const why = (e.stderr.split("\n").find((l) => l.trim() !== "") ?? "").slice(0, 300);
    return {
      ok: false,
      resultJson: "",
      error: `git refused the commit (git ${e.args[0]}: ${why}); nothing was committed`,
    };
  }
}

async function writeOnTip(gitDir: string, p: CommitPayload, tip: string): Promise<ApplyActionResponse> {
  const dir = await mkdtemp(join(tmpdir(), "gk-git-index-"));
  const env = { GIT_INDEX_FILE: join(dir, "index") };
  try {
    await git(gitDir, ["read-tree", tip], { env });
    // One --index-info batch (NUL-terminated): mode 0 removes an entry; works in bare repositories.
    const lines: string[] = [];
    for (const c of p.changes) {
      if ("delete" in c) {
        lines.push(`0 ${"0".repeat(40)}\t${c.path}`);
      } else {
        const sha = await gitText(gitDir, ["hash-object", "-w", "--stdin"], { input: c.content });
        lines.push(`100644 ${sha}\t${c.path}`);
      }
    }
    await git(gitDir, ["update-index", "-z", "--index-info"], { env, input: `${lines.join("\0")}\0` });
    const tree = await gitText(gitDir, ["write-tree"], { env });
    const commit = await gitText(gitDir, ["commit-tree", tree, "-p", tip], { input: p.message });
    try {
      await git(gitDir, [
        "update-ref",
        "-m",
        "gatekeeper-git: approved commit",
        `refs/heads/${p.branch}`,
        commit,
        tip,
      ]);
    } catch (e) {
      if (e instanceof GitFailed) {
        return {
          ok: false,
          resultJson: "",
          error: `branch ${p.branch} moved while committing; nothing was committed`,
        };
      }
      throw e;
    }
    return {
      ok: true,
      resultJson: JSON.stringify({ sha: commit, branch: p.branch, rebased: tip !== p.parent }),
      error: "",
    };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
