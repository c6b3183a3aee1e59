/**
 * Writes of a git binding: commit, createBranch, push. Each is submitted as an action with
 * delivery `simulate` and returns its provisional id at once; the pending write joins the
 * binding's overlay, so later reads show it. Writes of a binding are built one at a time in call
 * order (state.inOrder), so each sees every earlier pending write.
 *
 * Dependencies: a commit depends on the previous pending commit of its branch (or on the pending
 * createBranch of that branch); a createBranch on the pending tip it starts from; a push on the
 * pending tip of the branch it pushes. `egress` is set for every write that sends data to a remote
 * (any write on a remote repository, every push), so the restricted-data latch refuses it.
 */
import { buildDescription, inlineSafe, oneLine } from "@gatehouse/gatekeeper-kit";
import { type ActionDescription, Delivery } from "@gatehouse/proto";
import type { Binding, ResolvedRef } from "./binding.ts";
import { unifiedDiff } from "./diff-text.ts";
import { FileTooLarge, InvalidRequest, NotFound, ScopeViolation } from "./errors.ts";
import { GitFailed, gitText } from "./git.ts";
import { ruleFor } from "./remotes.ts";
import { blobSha, branchExists, logCommits, lsPaths, objectSize, readBlob } from "./repo.ts";
import { commitReview, createBranchReview, pushReview } from "./review.ts";
import { checkScopedPath, resolveInScope } from "./scope.ts";
import type {
  CommitPayload,
  CreateBranchPayload,
  FileChange,
  PendingGitWrite,
  PushPayload,
} from "./state.ts";

/** Result of a simulated write. */
export interface WriteResult {
  /** Provisional id, e.g. "~1". */
  id: string;
  branch: string;
  pending: true;
}

function obj(v: unknown, what: string): Record<string, unknown> {
  if (v === null || typeof v !== "object" || Array.isArray(v))
    throw new InvalidRequest(`${what} must be an object`);
  return v as Record<string, unknown>;
}

/** The pending write a new write on `r`'s branch must follow, if any. */
function tipDependency(r: ResolvedRef): string[] {
  const own = r.view.commits.filter((c) => c.branch === r.branch);
  if (own.length > 0) return [own[own.length - 1]!.localId];
  if (r.view.createdAt) return [r.view.createdAt.localId];
  const inherited = r.view.commits;
  return inherited.length > 0 ? [inherited[inherited.length - 1]!.localId] : [];
}

/** The review page's fields of a description (summary, key fields, risks, pre-flight warnings, preview). */
type ReviewField = "summary" | "fields" | "risks" | "preflightWarnings" | "preview";

async function submit(
  b: Binding,
  desc: Omit<
    ActionDescription,
    "delivery" | "implementsRevert" | "autoApprovable" | "descriptionIsComplete" | ReviewField
  > & {
    descriptionIsComplete: boolean;
  } & Partial<Pick<ActionDescription, ReviewField>>,
  write: PendingGitWrite,
): Promise<string> {
  const { localId, ...payload } = write;
  await b.approval.submitAction(
    b.ctx.callerToken,
    localId,
    {
      summary: "",
      fields: [],
      risks: [],
      preflightWarnings: [],
      preview: "",
      ...desc,
      delivery: Delivery.DELIVERY_SIMULATE,
      implementsRevert: 0,
      autoApprovable: false,
    },
    JSON.stringify(payload),
  );
  b.state.overlay.add(localId, write, desc.dependsOn);
  return localId;
}

/** Parses and checks `commit.changes`. @throws InvalidRequest, ScopeViolation, FileTooLarge. */
function parseChanges(b: Binding, raw: unknown): FileChange[] {
  if (!Array.isArray(raw) || raw.length === 0 || raw.length > b.limits.maxChanges) {
    throw new InvalidRequest(`commit.changes must be a list of 1 to ${b.limits.maxChanges} changes`);
  }
  const changes: FileChange[] = [];
  const seen = new Set<string>();
  raw.forEach((item, i) => {
    const c = obj(item, `commit.changes[${i}]`);
    const path = checkScopedPath(b.prefix, c.path, `commit.changes[${i}].path`);
    if (seen.has(path)) throw new InvalidRequest(`commit.changes[${i}].path repeats ${path}`);
    seen.add(path);
    if (c.delete === true && c.content === undefined) changes.push({ path, delete: true });
    else if (typeof c.content === "string" && c.delete === undefined) {
      if (Buffer.byteLength(c.content) > b.limits.maxFileBytes) {
        throw new FileTooLarge(`commit.changes[${i}].content is over ${b.limits.maxFileBytes} bytes`);
      }
      changes.push({ path, content: c.content });
    } else
      throw new InvalidRequest(
        `commit.changes[${i}] must be {path, content: string} or {path, delete: true}`,
      );
  });
  for (const x of seen) {
    if ([...seen].some((y) => y.startsWith(`${x}/`))) {
      throw new InvalidRequest(
        `commit.changes writes both ${x} and paths under it; a path is a file or a directory`,
      );
    }
  }
  return changes;
}

/**
 * For each change: the blob sha the agent's view holds (null = absent) and the previous text
 * (undefined = too large to show). @throws ScopeViolation (symlinks), InvalidRequest, NotFound.
 */
async function baseOf(b: Binding, r: ResolvedRef, changes: readonly FileChange[]) {
  const pending = r.view.changes;
  const entries = await lsPaths(
    b.gitDir,
    r.commit,
    changes.map((c) => c.path),
  );
  const base: Record<string, string | null> = {};
  const old = new Map<string, string | null | undefined>();
  for (const c of changes) {
    if ((await resolveInScope(b.gitDir, r.commit, b.prefix, c.path)) !== c.path) {
      throw new ScopeViolation(`${c.path} goes through a symlink; changing paths behind symlinks is refused`);
    }
    const parents = c.path
      .split("/")
      .slice(0, -1)
      .map((_, i, ps) => ps.slice(0, i + 1).join("/"));
    const parentEntries = await lsPaths(b.gitDir, r.commit, parents);
    const fileParent = parents.find((d) =>
      pending.has(d) ? pending.get(d) !== null : parentEntries.some((e) => e.path === d && e.type !== "tree"),
    );
    if (fileParent !== undefined) {
      throw new InvalidRequest(`${c.path} cannot be written: ${fileParent} is a file, not a directory`);
    }
    if (pending.has(c.path)) {
      const p = pending.get(c.path) ?? null;
      base[c.path] = p === null ? null : blobSha(p);
      old.set(c.path, p);
    } else {
      const e = entries.find((x) => x.path === c.path);
      if (e && e.type !== "blob") throw new InvalidRequest(`${c.path} is a directory; change files only`);
      if (e?.mode === "120000")
        throw new ScopeViolation(`${c.path} is a symlink; changing symlinks is refused`);
      base[c.path] = e ? e.sha : null;
      old.set(
        c.path,
        e
          ? (await objectSize(b.gitDir, e.sha)) > b.limits.maxFileBytes
            ? undefined
            : (await readBlob(b.gitDir, e.sha)).toString("utf8")
          : null,
      );
    }
    if ("delete" in c && base[c.path] === null)
      throw new NotFound(`${c.path} does not exist; nothing to delete`);
  }
  return { base, old };
}

/** The approver's description of a commit: headline, parent, message and the exact diff (bounded). */
export async function describeCommit(
  b: Pick<Binding, "repoName" | "limits">,
  p: CommitPayload,
  old: Map<string, string | null | undefined>,
  headline: string,
): Promise<{ description: string; complete: boolean }> {
  const d = await unifiedDiff(p.changes, old, b.limits.maxFileBytes);
  const desc = buildDescription({
    headline,
    details: [`Parent: ${p.parent}`],
    blocks: [
      { label: "Commit message (untrusted):", text: p.message, maxBytes: 4096 },
      {
        label: "Diff (untrusted, exactly as it will be committed):",
        text: d.text,
        lang: "diff",
        maxBytes: b.limits.maxDiffBytes,
      },
    ],
  });
  return { description: desc.description, complete: desc.descriptionIsComplete && d.complete };
}

/** Simulates a commit on an existing (or pending) branch. */
export async function commit(b: Binding, args?: unknown): Promise<WriteResult> {
  const a = obj(args ?? {}, "commit arguments");
  const branch = b.checkBranch(a.branch, "commit.branch");
  if (typeof a.message !== "string" || a.message.trim() === "" || a.message.length > 10_000) {
    throw new InvalidRequest("commit.message must be a non-empty string of at most 10000 characters");
  }
  const changes = parseChanges(b, a.changes);
  const missing = () => new NotFound(`branch ${branch} does not exist; create it first with createBranch`);
  const r = await b.resolve(branch).catch((e: unknown) => {
    throw e instanceof NotFound ? missing() : e;
  });
  if (r.branch === undefined) throw missing();
  const { base, old } = await baseOf(b, r, changes);
  const payload: CommitPayload = {
    kind: "commit",
    branch,
    message: a.message,
    changes,
    parent: r.commit,
    base,
  };
  const where = b.ctx.resource.remote ? ` and push it to ${inlineSafe(b.ctx.resource.remote.url)}` : "";
  const d = await describeCommit(
    b,
    payload,
    old,
    `Commit ${changes.length} file change(s) to branch ${inlineSafe(branch)} of ${b.repoName}${where}.`,
  );
  const localId = b.state.ids.next();
  await submit(
    b,
    {
      title: `Commit to ${oneLine(branch)}: ${oneLine(a.message.split("\n")[0] ?? "", 80)}`,
      description: d.description,
      descriptionIsComplete: d.complete,
      dependsOn: tipDependency(r),
      actionKind: { tag: "git.commit", label: "Commit" },
      classifiedBy: "gatekeeper-git: commit is a write",
      egress: b.ctx.resource.remote !== undefined,
      ...commitReview(payload, old, b.ctx.resource.remote?.url),
    },
    { ...payload, localId },
  );
  return { id: localId, branch, pending: true };
}

/** Simulates creating branch `name` at `from` (a branch, with its pending commits, or a sha; default the default branch). */
export async function createBranch(b: Binding, args?: unknown): Promise<WriteResult> {
  const a = obj(args ?? {}, "createBranch arguments");
  if (b.ctx.resource.branch !== undefined) {
    throw new ScopeViolation(
      `this binding is narrowed to branch ${b.ctx.resource.branch} (#branch=); it cannot create branches`,
    );
  }
  const name = b.checkBranch(a.name, "createBranch.name");
  const r = await b.resolve(a.from);
  if ((await branchExists(b.gitDir, name)) || b.views().get(name)?.createdAt) {
    throw new InvalidRequest(`branch ${name} already exists (or is pending); pick another name`);
  }
  const dependsOn = tipDependency(r);
  const last = r.view.commits[r.view.commits.length - 1];
  const payload: CreateBranchPayload = {
    kind: "createBranch",
    name,
    fromCommit: r.commit,
    ...(last ? { fromPending: last.localId, fromBranch: r.branch } : {}),
  };
  const start = last
    ? `pending commit ${last.localId} (on ${inlineSafe(r.branch ?? "")})`
    : `commit ${r.commit}`;
  const where = b.ctx.resource.remote ? ` on ${inlineSafe(b.ctx.resource.remote.url)}` : "";
  const localId = b.state.ids.next();
  await submit(
    b,
    {
      title: `Create branch ${oneLine(name)} in ${b.repoTitle}`,
      description: `Create branch ${inlineSafe(name)} of ${b.repoName}${where} at ${start}${r.branch ? `, the tip of ${inlineSafe(r.branch)}` : ""}.`,
      descriptionIsComplete: true,
      dependsOn,
      actionKind: { tag: "git.createBranch", label: "Create branch" },
      classifiedBy: "gatekeeper-git: createBranch is a write",
      egress: b.ctx.resource.remote !== undefined,
      ...createBranchReview(
        name,
        last ? `${r.branch ?? ""} (pending ${last.localId})` : (r.branch ?? r.commit.slice(0, 12)),
        b.ctx.resource.remote?.url,
      ),
    },
    { ...payload, localId },
  );
  return { id: localId, branch: name, pending: true };
}

const REMOTE_NAME = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** The URL of remote `name` of a local repository. @throws NotFound when it has none. */
export async function remoteUrlOf(gitDir: string, name: string): Promise<string> {
  try {
    return await gitText(gitDir, ["config", "--get", `remote.${name}.url`]);
  } catch (e) {
    if (e instanceof GitFailed) throw new NotFound(`this repository has no remote named ${name}`);
    throw e;
  }
}

/** Simulates pushing `branch` of a local repository to its remote `remote` (default "origin"). */
export async function push(b: Binding, args?: unknown): Promise<WriteResult> {
  const a = obj(args ?? {}, "push arguments");
  if (b.ctx.resource.remote) {
    throw new InvalidRequest(
      "this binding is a remote repository: each approved commit is pushed to it; push is for local (git+file) repositories with a remote",
    );
  }
  const branch = b.checkBranch(a.branch, "push.branch");
  const remote = a.remote ?? "origin";
  if (typeof remote !== "string" || !REMOTE_NAME.test(remote)) {
    throw new InvalidRequest('push.remote must be the name of a remote of the repository, e.g. "origin"');
  }
  const missing = () => new NotFound(`branch ${branch} does not exist`);
  const r = await b.resolve(branch).catch((e: unknown) => {
    throw e instanceof NotFound ? missing() : e;
  });
  if (r.branch === undefined) throw missing();
  const url = await remoteUrlOf(b.gitDir, remote);
  if (!ruleFor(b.remotes, url)) {
    throw new ScopeViolation(
      `remote ${remote} points at a URL no administrator allowed (GATEKEEPER_GIT_REMOTES); nothing was pushed`,
    );
  }
  const pendingHere = r.view.commits.map((c) => `${c.localId} (pending): ${c.message.split("\n")[0] ?? ""}`);
  const realHere = (await logCommits(b.gitDir, r.commit, "", 0, 20)).map(
    (c) => `${c.id.slice(0, 12)}: ${c.message.split("\n")[0] ?? ""}`,
  );
  const desc = buildDescription({
    headline: `Push branch ${inlineSafe(branch)} of ${b.repoName} to remote ${inlineSafe(remote)} (${inlineSafe(url, 300)}); the remote branch moves only by fast-forward.`,
    details: [
      `${pendingHere.length} pending commit(s) of the branch are applied before the push; the latest ${realHere.length} approved commit(s) follow (those already on the remote are not sent again).`,
    ],
    blocks: [
      {
        label: "Commits (untrusted subjects, newest last for pending, newest first for approved):",
        text: [...pendingHere, ...realHere].join("\n"),
        maxBytes: 8192,
      },
    ],
  });
  const payload: PushPayload = { kind: "push", branch, remote, remoteUrl: url };
  const localId = b.state.ids.next();
  await submit(
    b,
    {
      title: `Push ${oneLine(branch)} of ${b.repoTitle} to ${oneLine(remote)}`,
      description: desc.description,
      descriptionIsComplete: desc.descriptionIsComplete,
      dependsOn: tipDependency(r),
      actionKind: { tag: "git.push", label: "Push" },
      classifiedBy: "gatekeeper-git: push sends commits to a remote",
      egress: true,
      ...pushReview(branch, remote, url, [...pendingHere, ...realHere]),
    },
    { ...payload, localId },
  );
  return { id: localId, branch, pending: true };
}
