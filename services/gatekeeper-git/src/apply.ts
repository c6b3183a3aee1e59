/**
 * ApplyAction for git. At most once per action id in this process: a second ApplyAction of the
 * same id returns the first outcome and writes nothing. Applies on one repository are serialized.
 *
 * - commit: after a forced refresh of the upstream, the commit is built with plumbing (a
 *   temporary index, hash-object, update-index, write-tree, commit-tree) on the branch tip and
 *   published with a compare-and-swap (local: update-ref; remote: push --force-with-lease). If the
 *   branch moved in between, it is re-checked and rebuilt (3 attempts).
 *   Rebase rule: every changed path must still hold, at the tip, the content the agent based the
 *   change on (`payload.base`); then the changes apply on the tip (a clean rebase when the branch
 *   moved); otherwise the action fails naming the conflicting paths. `rebased` in the result is
 *   true whenever the tip differed from the payload's `parent`.
 * - createBranch: publishes the new branch at its start commit (a pending start "~N" resolves to
 *   the sha ~N became); fails if the branch exists by then.
 * - push: pushes a local branch to the repository's remote with the admin's credentials, fast-forward only.
 *
 * Outcomes of a write to a remote (remote-outcome.ts): a remote that cannot be reached (the fetch
 * before a commit, the branch read before a push, or the push's own connect) is a failure naming
 * the remote's origin, the cause and what to check (nothing was sent); a remote that answered with
 * a refusal is a failure with its reason; a push that ended without a clear answer is settled by
 * reading the remote branch: at the pushed commit, applied; otherwise `AnswerLost` (outcome
 * unknown, never sent again). Remote calls are bounded by the caller's deadline.
 *
 * A failed apply drops the write and its dependents from the overlay. Assumes sha1 object format.
 * The ref updates and the push action live in publish.ts.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { ApplyActionRequest, ApplyActionResponse } from "@gatehouse/proto";
import type { Logger } from "pino";
import { InvalidRequest } from "./errors.ts";
import { GitFailed, git, gitText } from "./git.ts";
import { failed, failedBeforeWriting, publishChecked, pushBranch } from "./publish.ts";
import { branchExists, lsPaths, resolveCommit } from "./repo.ts";
import type { GitResource, ResourcePolicy } from "./resource-url.ts";
import { isValidBranchName, parseGitResource } from "./resource-url.ts";
import { checkScopedPath } from "./scope.ts";
import {
  type BindingState,
  type CommitPayload,
  type CreateBranchPayload,
  dropWrite,
  type FileChange,
  type GitState,
  type PushPayload,
  type WritePayload,
} from "./state.ts";
import { type Upstream, upstreamFor } from "./upstream.ts";

const SHA = /^[0-9a-f]{40,64}$/;

/**
 * Parses `payload_json` as staged by commit, createBranch or push (a payload without `kind` is a
 * commit). @throws InvalidRequest naming payload_json.
 */
export function parseWritePayload(json: string): WritePayload {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    throw new InvalidRequest("payload_json is not JSON; it must be the payload gatekeeper-git staged");
  }
  const w = v as Record<string, unknown> | null;
  if (w && typeof w === "object" && w.kind === "createBranch") {
    if (
      typeof w.name === "string" &&
      isValidBranchName(w.name) &&
      typeof w.fromCommit === "string" &&
      SHA.test(w.fromCommit) &&
      (w.fromPending === undefined || (typeof w.fromPending === "string" && /^~\d+$/.test(w.fromPending)))
    )
      return w as unknown as CreateBranchPayload;
    throw new InvalidRequest(
      "payload_json must be {kind: createBranch, name, fromCommit, fromPending?} as staged by gatekeeper-git",
    );
  }
  if (w && typeof w === "object" && w.kind === "push") {
    if (
      typeof w.branch === "string" &&
      isValidBranchName(w.branch) &&
      typeof w.remote === "string" &&
      typeof w.remoteUrl === "string"
    )
      return w as unknown as PushPayload;
    throw new InvalidRequest(
      "payload_json must be {kind: push, branch, remote, remoteUrl} as staged by gatekeeper-git",
    );
  }
  return parseCommitPayload(json);
}

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
    (p.kind === undefined || p.kind === "commit") &&
    typeof p.parent === "string" &&
    SHA.test(p.parent) &&
    p.base &&
    typeof p.base === "object" &&
    Array.isArray(p.changes) &&
    p.changes.every(
      (c: FileChange) =>
        c &&
        typeof c.path === "string" &&
        (("content" in c && typeof c.content === "string") ||
          ("delete" in c && c.delete === true) ||
          ("blob" in c && SHA.test(c.blob) && (c.mode === "100644" || c.mode === "100755"))) &&
        (p.base as Record<string, unknown>)[c.path] !== undefined,
    );
  if (!ok)
    throw new InvalidRequest(
      "payload_json must be {branch, message, changes, parent, base} as staged by gatekeeper-git",
    );
  return p as CommitPayload;
}

export interface ApplyDeps {
  policy: ResourcePolicy;
  state: GitState;
  logger: Logger;
}

/** The commit sha in an applied commit's result_json, if any. */
function shaOf(resultJson: string | undefined): string | undefined {
  if (!resultJson) return undefined;
  try {
    const sha = (JSON.parse(resultJson) as { sha?: unknown }).sha;
    return typeof sha === "string" && SHA.test(sha) ? sha : undefined;
  } catch {
    return undefined;
  }
}

/** A write checked against its binding: the resource, the payload and its branch. */
export interface CheckedWrite {
  resource: GitResource;
  payload: WritePayload;
  branch: string;
}

/**
 * Checks an apply request before anything is written: the resource URL, the payload, the staged
 * branch against `#branch=` and every changed path against the path scope.
 * @throws InvalidRequest / resource URL errors / ScopeViolation naming the part at fault.
 */
export function checkWrite(req: ApplyActionRequest, policy: ResourcePolicy): CheckedWrite {
  const resource = parseGitResource(req.url, policy);
  const payload = parseWritePayload(req.payloadJson);
  const branch = payload.kind === "createBranch" ? payload.name : payload.branch;
  if (resource.branch !== undefined && branch !== resource.branch) {
    throw new InvalidRequest(`the staged branch is outside this binding's #branch=${resource.branch}`);
  }
  if (payload.kind !== "createBranch" && payload.kind !== "push") {
    for (const c of payload.changes) checkScopedPath(resource.pathPrefix, c.path, "a staged change path");
  }
  return { resource, payload, branch };
}

/** The key of an action in `GitState.applied` (at most once per action id in this process). */
export function appliedKey(req: ApplyActionRequest): string {
  return `${req.workspaceId}\u0000${req.binding}\u0000${req.actionId}`;
}

/**
 * Brings the binding's simulation up to an apply's outcome: an applied write leaves the overlay
 * (a commit's provisional id becomes an alias of its sha), a failed one is dropped with the writes
 * built on it. Logs `apply.ok` / `apply.failed`.
 */
export function settleOutcome(
  st: BindingState,
  req: ApplyActionRequest,
  payload: WritePayload,
  res: ApplyActionResponse,
  logger: Logger,
): void {
  const log = logger.child({ component: "apply", workspaceId: req.workspaceId, actionId: req.actionId });
  if (res.ok) {
    st.overlay.settle(req.localId);
    const sha = (JSON.parse(res.resultJson) as { sha?: string }).sha;
    if (payload.kind !== "createBranch" && payload.kind !== "push" && sha && st.ids.issued(req.localId)) {
      st.ids.alias(req.localId, sha);
    } else if (payload.kind === "createBranch") {
      st.settled.set(req.localId, { kind: "branch", name: payload.name });
    } else if (payload.kind === "push") {
      st.settled.set(req.localId, { kind: "push" });
    }
    log.info({ event: "apply.ok", kind: payload.kind ?? "commit" }, "write applied");
  } else {
    dropWrite(st, req.localId, "failed to apply");
    log.info({ event: "apply.failed", kind: payload.kind ?? "commit" }, "write not applied");
  }
}

/**
 * Performs one approved action.
 * @param deadline the caller's deadline, epoch ms (default: none); bounds the remote calls.
 * @throws InvalidRequest / resource errors before any write; AnswerLost when a push may have
 *   happened and its outcome cannot be seen.
 */
export function applyAction(
  req: ApplyActionRequest,
  deps: ApplyDeps,
  deadline = Infinity,
): Promise<ApplyActionResponse> {
  const key = appliedKey(req);
  const had = deps.state.applied.get(key);
  if (had) return had;
  const { resource, payload } = checkWrite(req, deps.policy);
  const st = deps.state.binding(req.workspaceId, req.binding);
  const up = upstreamFor(resource, deps.state.fetches);
  const run = deps.state.serialize(resource.gitDir, async () => {
    try {
      if (payload.kind === "createBranch") {
        const from = payload.fromPending
          ? (st.ids.permanentOf(payload.fromPending) ?? shaOf(req.dependencyResults[payload.fromPending]))
          : payload.fromCommit;
        if (from === undefined) {
          return failed(
            `the commit the branch starts from (${payload.fromPending}) is not applied (no result for it in the request); nothing was created`,
          );
        }
        await up.refresh(true);
        const published = await publishChecked(up, payload.name, from, null, deadline);
        if (published === "moved") {
          return failed(`branch ${payload.name} exists already; nothing was created`);
        }
        if (published !== "ok") return published;
        return { ok: true, resultJson: JSON.stringify({ branch: payload.name, sha: from }), error: "" };
      }
      if (payload.kind === "push") return await pushBranch(resource.gitDir, payload, deps.policy, deadline);
      return await writeCommit(up, resource.gitDir, payload, deadline);
    } catch (e) {
      if (!(e instanceof GitFailed)) throw e;
      return failedBeforeWriting(e, up.remoteUrl);
    }
  });
  deps.state.applied.set(key, run);
  return run.then((res) => {
    settleOutcome(st, req, payload, res, deps.logger);
    return res;
  });
}

/** How often a commit (or a run of commits) is rebuilt when its branch moved while publishing. */
export const ATTEMPTS = 3;

async function writeCommit(
  up: Upstream,
  gitDir: string,
  p: CommitPayload,
  deadline: number,
): Promise<ApplyActionResponse> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    await up.refresh(true);
    if (!(await branchExists(gitDir, p.branch))) {
      return failed(`branch ${p.branch} no longer exists; nothing was committed`);
    }
    const tip = await resolveCommit(gitDir, p.branch);
    const conflicts = await conflictingPaths(gitDir, p, tip);
    if (conflicts.length > 0) {
      return failed(
        `branch ${p.branch} moved and these paths changed since the commit was made: ${conflicts.join(", ")}; nothing was committed`,
      );
    }
    let commit: string;
    try {
      commit = await buildCommit(gitDir, p, tip);
    } catch (e) {
      if (e instanceof PathRefused) return failed(e.message);
      throw e;
    }
    const published = await publishChecked(up, p.branch, commit, tip, deadline);
    if (published === "ok") {
      return {
        ok: true,
        resultJson: JSON.stringify({ sha: commit, branch: p.branch, rebased: tip !== p.parent }),
        error: "",
      };
    }
    if (published !== "moved") return published;
  }
  return failed(
    `branch ${p.branch} kept moving while committing (${ATTEMPTS} attempts); nothing was committed`,
  );
}

/**
 * Changed paths whose content at `tip` is not what the agent saw, or whose parent directory
 * became a file (git would otherwise silently replace that file with the directory).
 */
export async function conflictingPaths(gitDir: string, p: CommitPayload, tip: string): Promise<string[]> {
  const paths = p.changes.map((c) => c.path);
  const ancestorsOf = (path: string) =>
    path
      .split("/")
      .slice(0, -1)
      .map((_, i, parts) => parts.slice(0, i + 1).join("/"));
  const now = await lsPaths(gitDir, tip, [...new Set(paths.flatMap((x) => [...ancestorsOf(x), x]))]);
  return paths.filter(
    (path) =>
      (now.find((e) => e.path === path)?.sha ?? null) !== p.base[path] ||
      ancestorsOf(path).some((a) => now.some((e) => e.path === a && e.type !== "tree")),
  );
}

/** Raised when git silently left a staged path out of the tree (a name it does not allow). */
export class PathRefused extends Error {}

/**
 * Writes the commit's objects on top of `tip` (no ref moves). A changed file keeps its mode
 * (an executable stays executable); new files are 100644; a restored blob brings its own mode.
 * @returns the new commit sha. @throws PathRefused when git dropped a path from the tree.
 */
export async function buildCommit(gitDir: string, p: CommitPayload, tip: string): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "gk-git-index-"));
  const env = { GIT_INDEX_FILE: join(dir, "index") };
  try {
    await git(gitDir, ["read-tree", tip], { env });
    const before = await lsPaths(
      gitDir,
      tip,
      p.changes.map((c) => c.path),
    );
    // One --index-info batch (NUL-terminated): mode 0 removes an entry; works in bare repositories.
    const lines: string[] = [];
    const expected = new Map<string, string | null>();
    for (const c of p.changes) {
      if ("delete" in c) {
        lines.push(`0 ${"0".repeat(40)}\t${c.path}`);
        expected.set(c.path, null);
      } else if ("blob" in c) {
        lines.push(`${c.mode} ${c.blob}\t${c.path}`);
        expected.set(c.path, c.blob);
      } else {
        const sha = await gitText(gitDir, ["hash-object", "-w", "--stdin"], { input: c.content });
        const mode = before.find((e) => e.path === c.path)?.mode === "100755" ? "100755" : "100644";
        lines.push(`${mode} ${sha}\t${c.path}`);
        expected.set(c.path, sha);
      }
    }
    await git(gitDir, ["update-index", "-z", "--index-info"], { env, input: `${lines.join("\0")}\0` });
    const tree = await gitText(gitDir, ["write-tree"], { env });
    // git's update-index skips names it refuses with only a warning: check every path landed.
    const after = await lsPaths(gitDir, tree, [...expected.keys()]);
    for (const [path, sha] of expected) {
      if ((after.find((e) => e.path === path)?.sha ?? null) !== sha) {
        throw new PathRefused(`git refused the path ${path}; nothing was committed`);
      }
    }
    return await gitText(gitDir, ["commit-tree", tree, "-p", tip], { input: p.message });
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
