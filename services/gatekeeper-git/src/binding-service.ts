/**
 * The domain of one binding session: reads as observations (each page recorded before it is
 * returned; a failing read records nothing) and commits as simulated actions over the kit's
 * PendingOverlay. Pending commits are shown by later reads of their branch, in order.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  type ApprovalQueue,
  buildDescription,
  inlineSafe,
  observePage,
  pageOf,
} from "@gatehouse/gatekeeper-kit";
import { Delivery } from "@gatehouse/proto";
import { FileTooLarge, InvalidRequest, NotFound, ScopeViolation } from "./errors.ts";
import { git } from "./git.ts";
import {
  blobSha,
  branchExists,
  countCommits,
  headBranch,
  type LogEntry,
  logCommits,
  lsPaths,
  lsRecursive,
  objectSize,
  readBlob,
  resolveCommit,
} from "./repo.ts";
import { type GitResource, isValidBranchName } from "./resource-url.ts";
import { checkScopedPath, resolveInScope } from "./scope.ts";
import {
  type BindingState,
  type CommitPayload,
  type FileChange,
  inOrder,
  type PendingCommit,
} from "./state.ts";

/** Limits of a binding. */
export interface Limits {
  listPageSize: number;
  logPageSize: number;
  maxFileBytes: number;
  maxDiffBytes: number;
  maxChanges: number;
}

export const DEFAULT_LIMITS: Limits = {
  listPageSize: 1000,
  logPageSize: 100,
  maxFileBytes: 1024 * 1024,
  maxDiffBytes: 64 * 1024,
  maxChanges: 200,
};

/** Who the session acts for. */
export interface SessionContext {
  workspaceId: string;
  binding: string;
  callerToken: string;
  resource: GitResource;
}

/** One page of a listing. */
export interface FilePage {
  files: string[];
  page: number;
  more: boolean;
}

/** One page of history, newest first; pending commits (ids "~N") come first. */
export interface LogPage {
  commits: LogEntry[];
  page: number;
  more: boolean;
}

/** One matching line. */
export interface GrepMatch {
  path: string;
  /** 1-based line number. */
  line: number;
  text: string;
}

/** One page of grep matches. */
export interface GrepPage {
  matches: GrepMatch[];
  page: number;
  more: boolean;
}

/** Result of a simulated commit. */
export interface CommitResult {
  id: string;
  branch: string;
  pending: true;
}

function obj(v: unknown, what: string): Record<string, unknown> {
  if (v === undefined) return {};
  if (v === null || typeof v !== "object" || Array.isArray(v))
    throw new InvalidRequest(`${what} must be an object`);
  return v as Record<string, unknown>;
}

function pageArg(v: unknown): number {
  if (v === undefined) return 0;
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0) {
    throw new InvalidRequest("page must be a non-negative integer (0-based)");
  }
  return v;
}

export class GitBindingService {
  constructor(
    readonly ctx: SessionContext,
    readonly state: BindingState,
    readonly approval: ApprovalQueue,
    readonly limits: Limits = DEFAULT_LIMITS,
  ) {}

  get #gitDir(): string {
    return this.ctx.resource.gitDir;
  }

  get #prefix(): string {
    return this.ctx.resource.pathPrefix;
  }

  get #repoName(): string {
    return inlineSafe(this.ctx.resource.repoPath.split("/").pop() ?? "repo");
  }

  /** Resolves `ref` (default: the scoped branch, else HEAD) to {commit, branch-if-any}. */
  async #ref(ref: unknown): Promise<{ commit: string; branch: string | undefined }> {
    const scoped = this.ctx.resource.branch;
    if (ref !== undefined && (typeof ref !== "string" || ref === "")) {
      throw new InvalidRequest("ref must be a non-empty string (a branch name or commit sha)");
    }
    if (typeof ref === "string" && !isValidBranchName(ref)) {
      throw new InvalidRequest("ref must be a branch name or commit sha (letters, digits, ._/-)");
    }
    if (scoped !== undefined && ref !== undefined && ref !== scoped) {
      throw new ScopeViolation(
        `this binding is narrowed to branch ${scoped} (#branch=); ref must be omitted or "${scoped}"`,
      );
    }
    const name = (ref as string | undefined) ?? scoped ?? (await headBranch(this.#gitDir)) ?? "HEAD";
    const commit = await resolveCommit(this.#gitDir, name);
    const branch = (await branchExists(this.#gitDir, name)) ? name : undefined;
    return { commit, branch };
  }

  #pendingOn(branch: string | undefined): PendingCommit[] {
    if (branch === undefined) return [];
    return this.state.overlay
      .pending()
      .map((p) => p.write)
      .filter((c) => c.branch === branch);
  }

  /** Pending view of changed paths on `branch`: path -> content (null = deleted), latest wins. */
  #pendingFiles(branch: string | undefined): Map<string, string | null> {
    return this.state.overlay.view(new Map<string, string | null>(), (m, c) => {
      if (c.branch !== branch) return m;
      const next = new Map(m);
      for (const ch of c.changes) next.set(ch.path, "delete" in ch ? null : ch.content);
      return next;
    });
  }

  /** Lists files (paths under the scope), `listPageSize` per page; each page is observed. */
  async listFiles(args?: unknown): Promise<FilePage> {
    const a = obj(args, "listFiles arguments");
    const page = pageArg(a.page);
    const { commit, branch } = await this.#ref(a.ref);
    const res = await observePage(
      this.approval,
      this.ctx.callerToken,
      (s: FilePage) => ({
        title: `Listed ${s.files.length} files in ${this.#repoName} (page ${page})`,
        description: `Listed ${s.files.length} file paths of ${this.#repoName} at ${inlineSafe(branch ?? commit)}${this.#prefix ? ` under ${inlineSafe(this.#prefix)}` : ""}, page ${page}${s.more ? " (more pages follow)" : ""}.`,
        containsRestrictedData: false,
        kind: "git.listFiles",
      }),
      page,
      async () => {
        const entries = await lsRecursive(this.#gitDir, commit, this.#prefix);
        const set = new Set(entries.map((e) => e.path));
        for (const [p, content] of this.#pendingFiles(branch)) {
          if (content === null) set.delete(p);
          else set.add(p);
        }
        const all = [...set].sort();
        const slice = pageOf(all, page, this.limits.listPageSize);
        return { files: slice.items, page, more: slice.more };
      },
    );
    return res.data;
  }

  /** Reads a text file (at most `maxFileBytes`); observed before it is returned. */
  async readFile(args?: unknown): Promise<string> {
    const a = obj(args, "readFile arguments");
    const path = checkScopedPath(this.#prefix, a.path);
    const { commit, branch } = await this.#ref(a.ref);
    const pending = this.#pendingFiles(branch);
    let content: string;
    if (pending.has(path)) {
      const c = pending.get(path);
      if (c === null || c === undefined)
        throw new NotFound(`${path} does not exist (deleted by a pending commit)`);
      content = c;
    } else {
      const real = await resolveInScope(this.#gitDir, commit, this.#prefix, path);
      const [entry] = (await lsPaths(this.#gitDir, commit, [real])).filter((e) => e.path === real);
      if (entry?.type !== "blob") throw new NotFound(`${path} is not a file at ${branch ?? commit}`);
      const size = await objectSize(this.#gitDir, entry.sha);
      if (size > this.limits.maxFileBytes) {
        throw new FileTooLarge(
          `${path} is ${size} bytes, over the read limit of ${this.limits.maxFileBytes} bytes; nothing was read`,
        );
      }
      content = (await readBlob(this.#gitDir, entry.sha)).toString("utf8");
    }
    await this.approval.authorizeObservation(this.ctx.callerToken, {
      title: `Read ${inlineSafe(path)} from ${this.#repoName}`,
      description: `Read ${Buffer.byteLength(content)} bytes of ${inlineSafe(path)} at ${inlineSafe(branch ?? commit)} in ${this.#repoName}.`,
      containsRestrictedData: false,
      kind: "git.readFile",
      page: 0,
    });
    return content;
  }

  /** History, newest first, `logPageSize` per page; pending commits of the branch first; each page observed. */
  async log(args?: unknown): Promise<LogPage> {
    const a = obj(args, "log arguments");
    const page = pageArg(a.page);
    const { commit, branch } = await this.#ref(a.ref);
    const res = await observePage(
      this.approval,
      this.ctx.callerToken,
      (s: LogPage) => ({
        title: `Read ${s.commits.length} log entries of ${this.#repoName} (page ${page})`,
        description: `Read ${s.commits.length} commits of ${this.#repoName} at ${inlineSafe(branch ?? commit)}, page ${page}.`,
        containsRestrictedData: false,
        kind: "git.log",
      }),
      page,
      async () => {
        const pending: LogEntry[] = this.#pendingOn(branch)
          .reverse()
          .map((c) => ({
            id: c.localId,
            author: "Gatehouse agent",
            date: "",
            message: c.message,
            pending: true,
          }));
        const size = this.limits.logPageSize;
        const start = page * size;
        const fromPending = pending.slice(start, start + size);
        const skip = Math.max(0, start - pending.length);
        const real = await logCommits(this.#gitDir, commit, this.#prefix, skip, size - fromPending.length);
        const total = pending.length + (await countCommits(this.#gitDir, commit, this.#prefix));
        return { commits: [...fromPending, ...real], page, more: start + size < total };
      },
    );
    return res.data;
  }

  /**
   * Fixed-string search (case-sensitive) in text files under the scope, pending commits included;
   * matches sorted by path then line, `listPageSize` per page, each page observed. Lines longer
   * than 500 characters are cut.
   */
  async grep(args?: unknown): Promise<GrepPage> {
    const a = obj(args, "grep arguments");
    if (
      typeof a.pattern !== "string" ||
      a.pattern === "" ||
      a.pattern.length > 200 ||
      a.pattern.includes("\n")
    ) {
      throw new InvalidRequest(
        "grep.pattern must be a non-empty single-line string of at most 200 characters",
      );
    }
    const pattern = a.pattern;
    const page = pageArg(a.page);
    const { commit, branch } = await this.#ref(a.ref);
    const res = await observePage(
      this.approval,
      this.ctx.callerToken,
      (s: GrepPage) => ({
        title: `Searched ${this.#repoName} (${s.matches.length} matches, page ${page})`,
        description: `Searched text files of ${this.#repoName} at ${inlineSafe(branch ?? commit)}${this.#prefix ? ` under ${inlineSafe(this.#prefix)}` : ""} for a fixed string; returned ${s.matches.length} matching lines, page ${page}.`,
        containsRestrictedData: false,
        kind: "git.grep",
      }),
      page,
      async () => {
        const pending = this.#pendingFiles(branch);
        const gargs = ["grep", "-z", "-n", "-I", "-F", "--full-name", "-e", pattern, commit];
        if (this.#prefix) gargs.push("--", this.#prefix);
        const out = (await git(this.#gitDir, gargs, { okCodes: [0, 1] })).toString("utf8");
        const matches: GrepMatch[] = [];
        for (const rec of out.split("\n")) {
          if (rec === "") continue;
          const [where, line, ...text] = rec.split("\u0000");
          const path = where!.slice(commit.length + 1);
          if (pending.has(path)) continue;
          matches.push({ path, line: Number(line), text: text.join("\u0000").slice(0, 500) });
        }
        for (const [path, content] of pending) {
          if (content === null) continue;
          content.split("\n").forEach((t, i) => {
            if (t.includes(pattern)) matches.push({ path, line: i + 1, text: t.slice(0, 500) });
          });
        }
        matches.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : x.line - y.line));
        const slice = pageOf(matches, page, this.limits.listPageSize);
        return { matches: slice.items, page, more: slice.more };
      },
    );
    return res.data;
  }

  /**
   * Simulates a commit: submitted as an action; returns its provisional id at once. Commits of a
   * binding are built one at a time in call order, so concurrent calls still chain correctly.
   */
  commit(args?: unknown): Promise<CommitResult> {
    return inOrder(this.state, () => this.#commit(args));
  }

  async #commit(args?: unknown): Promise<CommitResult> {
    const a = obj(args, "commit arguments");
    if (typeof a.branch !== "string" || !isValidBranchName(a.branch)) {
      throw new InvalidRequest("commit.branch must be a branch name (letters, digits, ._/-)");
    }
    const scoped = this.ctx.resource.branch;
    if (scoped !== undefined && a.branch !== scoped) {
      throw new ScopeViolation(
        `this binding is narrowed to branch ${scoped}; commit.branch must be "${scoped}"`,
      );
    }
    if (typeof a.message !== "string" || a.message.trim() === "" || a.message.length > 10_000) {
      throw new InvalidRequest("commit.message must be a non-empty string of at most 10000 characters");
    }
    if (!Array.isArray(a.changes) || a.changes.length === 0 || a.changes.length > this.limits.maxChanges) {
      throw new InvalidRequest(`commit.changes must be a list of 1 to ${this.limits.maxChanges} changes`);
    }
    const changes: FileChange[] = [];
    const seen = new Set<string>();
    a.changes.forEach((raw, i) => {
      const c = obj(raw, `commit.changes[${i}]`);
      const path = checkScopedPath(this.#prefix, c.path, `commit.changes[${i}].path`);
      if (seen.has(path)) throw new InvalidRequest(`commit.changes[${i}].path repeats ${path}`);
      seen.add(path);
      if (c.delete === true && c.content === undefined) changes.push({ path, delete: true });
      else if (typeof c.content === "string" && c.delete === undefined) {
        if (Buffer.byteLength(c.content) > this.limits.maxFileBytes) {
          throw new FileTooLarge(`commit.changes[${i}].content is over ${this.limits.maxFileBytes} bytes`);
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
    const branch = a.branch;
    if (!(await branchExists(this.#gitDir, branch))) {
      throw new NotFound(`branch ${branch} does not exist; creating branches is not supported yet`);
    }
    const parent = await resolveCommit(this.#gitDir, branch);
    const pending = this.#pendingFiles(branch);
    const entries = await lsPaths(
      this.#gitDir,
      parent,
      changes.map((c) => c.path),
    );
    const base: Record<string, string | null> = {};
    /** Previous content per path: null = absent, undefined = too large to show. */
    const old = new Map<string, string | null | undefined>();
    for (const c of changes) {
      if ((await resolveInScope(this.#gitDir, parent, this.#prefix, c.path)) !== c.path) {
        throw new ScopeViolation(
          `${c.path} goes through a symlink; changing paths behind symlinks is refused`,
        );
      }
      const parents = c.path
        .split("/")
        .slice(0, -1)
        .map((_, i, ps) => ps.slice(0, i + 1).join("/"));
      const parentEntries = await lsPaths(this.#gitDir, parent, parents);
      const fileParent = parents.find((d) =>
        pending.has(d)
          ? pending.get(d) !== null
          : parentEntries.some((e) => e.path === d && e.type !== "tree"),
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
            ? (await objectSize(this.#gitDir, e.sha)) > this.limits.maxFileBytes
              ? undefined
              : (await readBlob(this.#gitDir, e.sha)).toString("utf8")
            : null,
        );
      }
      if ("delete" in c && base[c.path] === null)
        throw new NotFound(`${c.path} does not exist; nothing to delete`);
    }
    const payload: CommitPayload = { branch, message: a.message, changes, parent, base };
    const diff = await unifiedDiff(changes, old, this.limits.maxFileBytes);
    const desc = buildDescription({
      headline: `Commit ${changes.length} file change(s) to branch ${inlineSafe(branch)} of ${this.#repoName}.`,
      details: [`Parent: ${parent}`],
      blocks: [
        { label: "Commit message (untrusted):", text: a.message, maxBytes: 4096 },
        {
          label: "Diff (untrusted, exactly as it will be committed):",
          text: diff.text,
          lang: "diff",
          maxBytes: this.limits.maxDiffBytes,
        },
      ],
    });
    const deps = this.#pendingOn(branch).map((c) => c.localId);
    const dependsOn = deps.length > 0 ? [deps[deps.length - 1]!] : [];
    const localId = this.state.ids.next();
    await this.approval.submitAction(
      this.ctx.callerToken,
      localId,
      {
        title: `Commit to ${inlineSafe(branch)}: ${inlineSafe(a.message.split("\n")[0] ?? "", 80)}`,
        description: desc.description,
        descriptionIsComplete: desc.descriptionIsComplete && diff.complete,
        delivery: Delivery.DELIVERY_SIMULATE,
        dependsOn,
        implementsRevert: 0,
        autoApprovable: false,
        actionKind: { tag: "git.commit", label: "Commit" },
        classifiedBy: "gatekeeper-git: commit is a write",
      },
      JSON.stringify(payload),
    );
    this.state.overlay.add(localId, { ...payload, localId }, dependsOn);
    return { id: localId, branch, pending: true };
  }
}

/**
 * Unified diff of `changes` against `old` (null = absent; undefined = too large to show, which makes
 * the diff incomplete), via `git diff --no-index` on temp files (the repository is not touched).
 */
export async function unifiedDiff(
  changes: readonly FileChange[],
  old: Map<string, string | null | undefined>,
  maxFileBytes: number,
): Promise<{ text: string; complete: boolean }> {
  const dir = await mkdtemp(join(tmpdir(), "gk-git-diff-"));
  try {
    const parts: string[] = [];
    let complete = true;
    for (const [i, c] of changes.entries()) {
      const before = old.get(c.path);
      if (before === undefined && old.has(c.path)) {
        complete = false;
        const what = "delete" in c ? "deleted" : "replaced";
        parts.push(
          `--- a/${c.path}\n+++ ${"delete" in c ? "/dev/null" : `b/${c.path}`}\n(previous content is over ${maxFileBytes} bytes and is not shown; the file is ${what} entirely)\n`,
        );
        continue;
      }
      const after = "delete" in c ? null : c.content;
      const a = join(dir, `a${i}`);
      const b = join(dir, `b${i}`);
      await writeFile(a, before ?? "");
      await writeFile(b, after ?? "");
      const out = (
        await git("", ["diff", "--no-index", "--no-color", "--no-ext-diff", "--text", "--", a, b], {
          okCodes: [0, 1],
        })
      ).toString("utf8");
      const hunks = out.slice(Math.max(0, out.indexOf("\n@@") + 1));
      const head = `--- ${before === null ? "/dev/null" : `a/${c.path}`}\n+++ ${after === null ? "/dev/null" : `b/${c.path}`}\n`;
      parts.push(out.includes("\n@@") ? head + hunks : `${head}(no content change)\n`);
    }
    return { text: parts.join(""), complete };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
