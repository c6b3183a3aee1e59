/**
 * Reads of a git binding, each an observation recorded before its data is returned (a failing
 * read records nothing), each page of a paged read recorded separately. Pending writes of the
 * binding are shown as if they had happened (view.ts).
 */
import {
  checkReplyFits,
  cutTextsToFit,
  inlineSafe,
  observePage,
  oneLine,
  pageOf,
  serializedBytes,
  textPageBytes,
} from "@gatehouse/gatekeeper-kit";
import type { Binding, ResolvedRef } from "./binding.ts";
import { unifiedDiff } from "./diff-text.ts";
import { FileTooLarge, InvalidRequest, NotFound } from "./errors.ts";
import { git } from "./git.ts";
import {
  blobSha,
  countCommits,
  type LogEntry,
  logCommits,
  lsRecursive,
  objectSize,
  readBlob,
  readBlobRange,
} from "./repo.ts";
import { checkScopedPath, resolveEntryInScope } from "./scope.ts";

/** One page of a listing. */
export interface FilePage {
  files: string[];
  page: number;
  more: boolean;
}

/** One page of a large file: `content` is whole UTF-8 characters (a page never splits one). */
export interface FileChunk {
  content: string;
  page: number;
  more: boolean;
  /** The file's size in bytes. */
  totalBytes: number;
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

/** One changed file of a diff. */
export interface FileDiff {
  path: string;
  status: "added" | "modified" | "deleted";
  /** Unified diff, at most `maxDiffBytes`. */
  patch: string;
  /** False when the patch was cut or a side was too large to show. */
  complete: boolean;
}

/** One page of a diff between two revisions (100 files per page). */
export interface DiffPage {
  files: FileDiff[];
  page: number;
  more: boolean;
}

/** Files per diff page. */
export const DIFF_PAGE_FILES = 100;

function obj(v: unknown, what: string): Record<string, unknown> {
  if (v === undefined) return {};
  if (v === null || typeof v !== "object" || Array.isArray(v))
    throw new InvalidRequest(`${what} must be an object`);
  return v as Record<string, unknown>;
}

/** Largest page number accepted (the observation's page is a uint32). */
export const MAX_PAGE = 1_000_000;

function pageArg(v: unknown): number {
  if (v === undefined) return 0;
  if (typeof v !== "number" || !Number.isSafeInteger(v) || v < 0 || v > MAX_PAGE) {
    throw new InvalidRequest(`page must be an integer from 0 to ${MAX_PAGE} (0-based)`);
  }
  return v;
}

/** What a FileChunk serializes to besides its content, at its largest (page and totalBytes maximal). */
const FILE_CHUNK_FIXED_BYTES = serializedBytes({
  content: "",
  page: MAX_PAGE,
  more: false,
  totalBytes: Number.MAX_SAFE_INTEGER,
});

/**
 * Bytes of file per readFilePage page under `limits.maxFrameBytes`: small enough that a page of
 * the worst text (every byte a control character, 6 bytes of JSON) still fits one frame.
 * About 170 KiB under the default 1 MiB cap.
 */
export function filePageBytes(limits: Pick<Binding["limits"], "maxFrameBytes">): number {
  return textPageBytes(limits.maxFrameBytes, FILE_CHUNK_FIXED_BYTES);
}

/** A cut text's marker (well under the kit's CUT_MARK_BYTES). */
const CUT_NOTE = "\n(cut to fit one reply)";

/** Where a read looked, for a description's Markdown: the ref's label, else its branch or commit. */
function at(r: ResolvedRef): string {
  return inlineSafe(r.label ?? r.branch ?? r.commit);
}

/** Lists files (paths under the scope), `listPageSize` per page; each page is observed. */
export async function listFiles(b: Binding, args?: unknown): Promise<FilePage> {
  const a = obj(args, "listFiles arguments");
  const page = pageArg(a.page);
  const r = await b.resolve(a.ref);
  const res = await observePage(
    b.approval,
    b.ctx.callerToken,
    (s: FilePage) =>
      b.observation(
        "git.listFiles",
        `Listed ${s.files.length} files in ${b.repoTitle} (page ${page})`,
        `Listed ${s.files.length} file paths of ${b.repoName} at ${at(r)}${b.scopeText}, page ${page}${s.more ? " (more pages follow)" : ""}.`,
      ),
    page,
    async () => {
      const entries = await lsRecursive(b.gitDir, r.commit, b.prefix);
      const set = new Set(entries.map((e) => e.path));
      for (const [p, content] of r.view.changes) {
        if (content === null) set.delete(p);
        else set.add(p);
      }
      const all = [...set].sort();
      const slice = pageOf(all, page, b.limits.listPageSize);
      const res = { files: slice.items, page, more: slice.more };
      checkReplyFits(
        res,
        b.limits.maxFrameBytes,
        `listFiles page ${page}`,
        "Its paths are too long for one reply; ask a person to narrow the binding with #path=.",
      );
      return res;
    },
  );
  return res.data;
}

/** Where a file's content is: pending text, or a real blob (sha, size). @throws NotFound, ScopeViolation. */
async function locateFile(
  b: Binding,
  r: ResolvedRef,
  path: string,
): Promise<{ pending: string } | { sha: string }> {
  if (r.view.changes.has(path)) {
    const c = r.view.changes.get(path);
    if (c === null || c === undefined)
      throw new NotFound(`${path} does not exist (deleted by a pending commit)`);
    return { pending: c };
  }
  const { entry } = await resolveEntryInScope(b.gitDir, r.commit, b.prefix, path);
  if (entry?.type !== "blob") throw new NotFound(`${path} is not a file at ${r.branch ?? r.commit}`);
  return { sha: entry.sha };
}

/** Reads a text file whole (at most `maxFileBytes`); observed before it is returned. */
export async function readFile(b: Binding, args?: unknown): Promise<string> {
  const a = obj(args, "readFile arguments");
  const path = checkScopedPath(b.prefix, a.path);
  const r = await b.resolve(a.ref);
  const where = await locateFile(b, r, path);
  let content: string;
  if ("pending" in where) content = where.pending;
  else {
    // One streamed read of at most limit + 1 bytes: more means too large (then ask for the size).
    const head = await readBlobRange(b.gitDir, where.sha, 0, b.limits.maxFileBytes + 1);
    if (head.length > b.limits.maxFileBytes) {
      const size = await objectSize(b.gitDir, where.sha);
      throw new FileTooLarge(
        `${path} is ${size} bytes, over the read limit of ${b.limits.maxFileBytes} bytes; nothing was read. Read it in pages with readFilePage({ path, page })`,
      );
    }
    if (head.includes(0)) {
      throw new InvalidRequest(`${path} is a binary file; readFile returns text only`);
    }
    content = head.toString("utf8");
  }
  checkReplyFits(
    content,
    b.limits.maxFrameBytes,
    `readFile of ${inlineSafe(path)}`,
    "Read it in pages with readFilePage({ path, page }).",
  );
  await b.approval.authorizeObservation(b.ctx.callerToken, {
    ...b.observation(
      "git.readFile",
      `Read ${oneLine(path)} from ${b.repoTitle}`,
      `Read ${Buffer.byteLength(content)} bytes of ${inlineSafe(path)} at ${at(r)} in ${b.repoName}.`,
    ),
    page: 0,
  });
  return content;
}

/** Moves `i` back to the start of a UTF-8 character in `buf` (buf[0] is at absolute offset `base`). */
function charStart(buf: Buffer, base: number, i: number): number {
  let j = i;
  while (j > base && j - base < buf.length && (buf[j - base]! & 0xc0) === 0x80) j--;
  return j;
}

/**
 * Page `page` of a file of any size, `filePageBytes(limits)` per page (both boundaries moved back
 * to whole UTF-8 characters, so a page is within 3 bytes of that), streamed so memory stays near
 * one page; each page observed. Every page fits one frame whatever the text: the bytes a start
 * moves back belong to a multi-byte character, which JSON keeps at one byte per byte.
 */
export async function readFilePage(b: Binding, args?: unknown): Promise<FileChunk> {
  const a = obj(args, "readFilePage arguments");
  const path = checkScopedPath(b.prefix, a.path);
  const page = pageArg(a.page);
  const r = await b.resolve(a.ref);
  const size = filePageBytes(b.limits);
  const res = await observePage(
    b.approval,
    b.ctx.callerToken,
    (c: FileChunk) =>
      b.observation(
        "git.readFilePage",
        `Read ${oneLine(path)} from ${b.repoTitle} (page ${page})`,
        `Read ${Buffer.byteLength(c.content)} of ${c.totalBytes} bytes of ${inlineSafe(path)} at ${at(r)} in ${b.repoName}, page ${page}${c.more ? " (more pages follow)" : ""}.`,
      ),
    page,
    async () => {
      const where = await locateFile(b, r, path);
      const total =
        "pending" in where ? Buffer.byteLength(where.pending) : await objectSize(b.gitDir, where.sha);
      const lo = page * size;
      const hi = Math.min(lo + size, total);
      if (lo >= total && !(page === 0 && total === 0)) {
        throw new InvalidRequest(
          `page ${page} is past the end of ${path} (${total} bytes, ${Math.ceil(total / size)} pages)`,
        );
      }
      // Read 3 bytes before and 1 after so both ends can move back to a character start.
      const from = Math.max(0, lo - 3);
      const to = Math.min(total, hi + 1);
      const buf =
        "pending" in where
          ? Buffer.from(where.pending).subarray(from, to)
          : await b.readBlobRange(where.sha, from, to);
      if (buf.includes(0))
        throw new InvalidRequest(`${path} is a binary file; readFilePage returns text only`);
      const start = lo === 0 ? 0 : charStart(buf, from, lo);
      const end = hi >= total ? total : charStart(buf, from, hi);
      const chunk = {
        content: buf.subarray(start - from, end - from).toString("utf8"),
        page,
        more: end < total,
        totalBytes: total,
      };
      checkReplyFits(chunk, b.limits.maxFrameBytes, `readFilePage page ${page}`, "");
      return chunk;
    },
  );
  return res.data;
}

/** History, newest first, `logPageSize` per page; pending commits of the branch first; each page observed. */
export async function log(b: Binding, args?: unknown): Promise<LogPage> {
  const a = obj(args, "log arguments");
  const page = pageArg(a.page);
  const r = await b.resolve(a.ref);
  const res = await observePage(
    b.approval,
    b.ctx.callerToken,
    (s: LogPage) =>
      b.observation(
        "git.log",
        `Read ${s.commits.length} log entries of ${b.repoTitle} (page ${page})`,
        `Read ${s.commits.length} commits of ${b.repoName} at ${at(r)}, page ${page}.`,
      ),
    page,
    async () => {
      const pending: LogEntry[] = [...r.view.commits]
        .reverse()
        .filter((c) => !b.prefix || c.changes.some((ch) => ch.path.startsWith(b.prefix)))
        .map((c) => ({
          id: c.localId,
          author: "Gatehouse agent",
          date: "",
          message: c.message,
          pending: true,
        }));
      const size = b.limits.logPageSize;
      const start = page * size;
      const fromPending = pending.slice(start, start + size);
      const skip = Math.max(0, start - pending.length);
      const real = await logCommits(b.gitDir, r.commit, b.prefix, skip, size - fromPending.length);
      const total = pending.length + (await countCommits(b.gitDir, r.commit, b.prefix));
      const res = { commits: [...fromPending, ...real], page, more: start + size < total };
      cutTextsToFit(
        res,
        b.limits.maxFrameBytes,
        res.commits.map((c) => ({
          get: () => c.message,
          set: (t: string) => {
            c.message = t + CUT_NOTE;
          },
        })),
        `log page ${page}`,
        "",
      );
      return res;
    },
  );
  return res.data;
}

/**
 * Fixed-string search (case-sensitive) in text files under the scope, pending commits included;
 * matches sorted by path then line, `listPageSize` per page, each page observed. Lines longer
 * than 500 characters are cut.
 */
export async function grep(b: Binding, args?: unknown): Promise<GrepPage> {
  const a = obj(args, "grep arguments");
  if (
    typeof a.pattern !== "string" ||
    a.pattern === "" ||
    a.pattern.length > 200 ||
    a.pattern.includes("\n")
  ) {
    throw new InvalidRequest("grep.pattern must be a non-empty single-line string of at most 200 characters");
  }
  const pattern = a.pattern;
  const page = pageArg(a.page);
  const r = await b.resolve(a.ref);
  const res = await observePage(
    b.approval,
    b.ctx.callerToken,
    (s: GrepPage) =>
      b.observation(
        "git.grep",
        `Searched ${b.repoTitle} (${s.matches.length} matches, page ${page})`,
        `Searched text files of ${b.repoName} at ${at(r)}${b.scopeText} for a fixed string; returned ${s.matches.length} matching lines, page ${page}.`,
      ),
    page,
    async () => {
      const pending = r.view.changes;
      const gargs = ["grep", "-z", "-n", "-I", "-F", "--full-name", "-e", pattern, r.commit];
      if (b.prefix) gargs.push("--", b.prefix);
      const out = (await git(b.gitDir, gargs, { okCodes: [0, 1] })).toString("utf8");
      const matches: GrepMatch[] = [];
      for (const rec of out.split("\n")) {
        if (rec === "") continue;
        const [where, line, ...text] = rec.split("\u0000");
        const path = where!.slice(r.commit.length + 1);
        if (pending.has(path)) continue;
        matches.push({ path, line: Number(line), text: text.join("\u0000").slice(0, 500) });
      }
      for (const [path, content] of pending) {
        if (content === null || (b.prefix && !path.startsWith(b.prefix))) continue;
        content.split("\n").forEach((t, i) => {
          if (t.includes(pattern)) matches.push({ path, line: i + 1, text: t.slice(0, 500) });
        });
      }
      matches.sort((x, y) => (x.path < y.path ? -1 : x.path > y.path ? 1 : x.line - y.line));
      const slice = pageOf(matches, page, b.limits.listPageSize);
      const res = { matches: slice.items, page, more: slice.more };
      cutTextsToFit(
        res,
        b.limits.maxFrameBytes,
        res.matches.map((m) => ({
          get: () => m.text,
          set: (t: string) => {
            m.text = `${t}…`;
          },
        })),
        `grep page ${page}`,
        "Its paths are too long for one reply; search for a rarer string.",
      );
      return res;
    },
  );
  return res.data;
}

/** A revision's files: the real commit plus pending changes on top. */
interface Revision {
  label: string;
  commit: string;
  changes: Map<string, string | null>;
}

/**
 * Resolves a diff revision: a pending commit id ("~N": the branch as of that commit; its real sha
 * once applied), a branch (its real tip, pending commits not included) or a commit sha;
 * `undefined` is the binding's branch with every pending commit.
 * @throws NotFound, InvalidRequest, ScopeViolation.
 */
async function revision(b: Binding, rev: unknown, what: string): Promise<Revision> {
  if (typeof rev === "string" && rev.startsWith("~")) {
    const r = await b.resolve(rev).catch((e: unknown) => {
      throw e instanceof NotFound ? new NotFound(`${what}: ${e.message}`) : e;
    });
    return { label: rev, commit: r.commit, changes: r.view.changes };
  }
  const r = await b.resolve(rev);
  if (rev === undefined)
    return {
      label: `${r.branch ?? r.commit} (with pending commits)`,
      commit: r.commit,
      changes: r.view.changes,
    };
  return { label: r.branch ?? r.commit, commit: r.commit, changes: new Map() };
}

/** path -> blob sha of `rev` under the scope (pending content hashed as a blob would be). */
async function shasOf(b: Binding, rev: Revision): Promise<Map<string, string>> {
  const m = new Map((await lsRecursive(b.gitDir, rev.commit, b.prefix)).map((e) => [e.path, e.sha] as const));
  for (const [p, c] of rev.changes) {
    if (b.prefix && !p.startsWith(b.prefix)) continue;
    if (c === null) m.delete(p);
    else m.set(p, blobSha(c));
  }
  return m;
}

/** Text of `path` in `rev`: string, null (absent), or undefined (over maxFileBytes). */
async function textOf(b: Binding, rev: Revision, sha: string | undefined, path: string) {
  if (sha === undefined) return null;
  const pending = rev.changes.get(path);
  if (typeof pending === "string") return pending;
  if ((await objectSize(b.gitDir, sha)) > b.limits.maxFileBytes) return undefined;
  return (await readBlob(b.gitDir, sha)).toString("utf8");
}

/**
 * Diff from revision `from` to `to` (default: the binding's branch with its pending commits),
 * changed files sorted by path, 100 files per page, each patch at most `maxDiffBytes`; each
 * page observed. Revisions: "~N" (as of that pending commit), a branch (its real tip) or a sha;
 * so `diff({ from: "main" })` shows everything pending on main.
 */
export async function diff(b: Binding, args?: unknown): Promise<DiffPage> {
  const a = obj(args, "diff arguments");
  if (a.from === undefined)
    throw new InvalidRequest('diff.from is required: a branch, a commit sha or a pending commit id ("~1")');
  const page = pageArg(a.page);
  const from = await revision(b, a.from, "diff.from");
  const to = await revision(b, a.to, "diff.to");
  const res = await observePage(
    b.approval,
    b.ctx.callerToken,
    (d: DiffPage) =>
      b.observation(
        "git.diff",
        `Diffed ${b.repoTitle} ${oneLine(from.label)}..${oneLine(to.label)} (page ${page})`,
        `Read the diff of ${d.files.length} files of ${b.repoName}${b.scopeText} from ${inlineSafe(from.label)} to ${inlineSafe(to.label)}, page ${page}${d.more ? " (more pages follow)" : ""}.`,
      ),
    page,
    async () => {
      const [sa, sb] = await Promise.all([shasOf(b, from), shasOf(b, to)]);
      const paths = [...new Set([...sa.keys(), ...sb.keys()])].filter((p) => sa.get(p) !== sb.get(p)).sort();
      const slice = pageOf(paths, page, DIFF_PAGE_FILES);
      const files: FileDiff[] = [];
      for (const path of slice.items) {
        const before = await textOf(b, from, sa.get(path), path);
        const after = await textOf(b, to, sb.get(path), path);
        const status = before === null ? "added" : after === null ? "deleted" : "modified";
        let patch: string;
        let complete = true;
        if (after === undefined) {
          patch = `--- a/${path}\n+++ b/${path}\n(new content is over ${b.limits.maxFileBytes} bytes and is not shown)\n`;
          complete = false;
        } else {
          const d = await unifiedDiff(
            [after === null ? { path, delete: true } : { path, content: after }],
            new Map([[path, before]]),
            b.limits.maxFileBytes,
          );
          patch = d.text;
          complete = d.complete;
        }
        if (Buffer.byteLength(patch) > b.limits.maxDiffBytes) {
          patch = `${Buffer.from(patch)
            .subarray(0, b.limits.maxDiffBytes)
            .toString("utf8")
            .replace(/\uFFFD$/, "")}\n(cut at ${b.limits.maxDiffBytes} bytes)\n`;
          complete = false;
        }
        files.push({ path, status, patch, complete });
      }
      const res = { files, page, more: slice.more };
      cutTextsToFit(
        res,
        b.limits.maxFrameBytes,
        files.map((f) => ({
          get: () => f.patch,
          set: (t: string) => {
            f.patch = `${t}${CUT_NOTE}\n`;
            f.complete = false;
          },
        })),
        `diff page ${page}`,
        "",
      );
      return res;
    },
  );
  return res.data;
}
