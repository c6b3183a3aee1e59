/**
 * Read-side git primitives for one repository: resolve refs, list a tree, read blobs, log. Every
 * path handed here is already checked against the scope (scope.ts); this module never builds a
 * shell command and always passes `--end-of-options` / `--` before caller-derived values.
 */
import { spawn } from "node:child_process";
import { createHash } from "node:crypto";
import { NotFound } from "./errors.ts";
import { GitFailed, git, gitText } from "./git.ts";

/** A tree entry. */
export interface TreeEntry {
  mode: string;
  type: string;
  sha: string;
  path: string;
}

/** The sha of a blob holding `content` (sha1 object format). */
export function blobSha(content: string | Buffer): string {
  const buf = typeof content === "string" ? Buffer.from(content, "utf8") : content;
  return createHash("sha1").update(`blob ${buf.length}\u0000`).update(buf).digest("hex");
}

/** Commit sha of `ref`. @throws NotFound when it does not resolve to a commit. */
export async function resolveCommit(gitDir: string, ref: string): Promise<string> {
  try {
    return await gitText(gitDir, ["rev-parse", "--verify", "--quiet", "--end-of-options", `${ref}^{commit}`]);
  } catch (e) {
    if (e instanceof GitFailed) throw new NotFound(`ref "${ref}" does not name a commit in this repository`);
    throw e;
  }
}

/** Commit sha of branch `name` (refs/heads/<name>), or undefined when there is no such branch. */
export async function branchCommit(gitDir: string, name: string): Promise<string | undefined> {
  try {
    return await gitText(gitDir, [
      "rev-parse",
      "--verify",
      "--quiet",
      "--end-of-options",
      `refs/heads/${name}^{commit}`,
    ]);
  } catch (e) {
    if (e instanceof GitFailed) return undefined;
    throw e;
  }
}

/** The branch HEAD points at, or undefined when detached. */
export async function headBranch(gitDir: string): Promise<string | undefined> {
  try {
    return await gitText(gitDir, ["symbolic-ref", "--quiet", "--short", "HEAD"]);
  } catch {
    return undefined;
  }
}

/** True when refs/heads/<name> exists. */
export async function branchExists(gitDir: string, name: string): Promise<boolean> {
  try {
    await git(gitDir, ["show-ref", "--verify", "--quiet", `refs/heads/${name}`]);
    return true;
  } catch {
    return false;
  }
}

function parseLsTree(out: Buffer): TreeEntry[] {
  const entries: TreeEntry[] = [];
  for (const rec of out.toString("utf8").split("\u0000")) {
    if (rec === "") continue;
    const tab = rec.indexOf("\t");
    const [mode, type, sha] = rec.slice(0, tab).split(" ");
    entries.push({ mode: mode!, type: type!, sha: sha!, path: rec.slice(tab + 1) });
  }
  return entries;
}

/** Entries for exactly `paths` at `commit` (missing paths are absent from the result). */
export async function lsPaths(
  gitDir: string,
  commit: string,
  paths: readonly string[],
): Promise<TreeEntry[]> {
  if (paths.length === 0) return [];
  return parseLsTree(await git(gitDir, ["ls-tree", "-z", "--full-tree", commit, "--", ...paths]));
}

/** Every blob/symlink under `prefix` ("" = all) at `commit`, recursively, sorted by path. */
export async function lsRecursive(gitDir: string, commit: string, prefix: string): Promise<TreeEntry[]> {
  const args = ["ls-tree", "-r", "-z", "--full-tree", commit];
  if (prefix) args.push("--", prefix);
  return parseLsTree(await git(gitDir, args));
}

/** Size in bytes of object `sha`. */
export async function objectSize(gitDir: string, sha: string): Promise<number> {
  return Number(await gitText(gitDir, ["cat-file", "-s", sha]));
}

/** Content of blob `sha`. */
export function readBlob(gitDir: string, sha: string): Promise<Buffer> {
  return git(gitDir, ["cat-file", "blob", sha]);
}

/** One log entry. */
export interface LogEntry {
  /** Commit sha, or a provisional id ("~1") for a pending commit. */
  id: string;
  author: string;
  date: string;
  message: string;
  pending: boolean;
}

/** `count` commits of `commit`'s history touching `prefix` (all when ""), after skipping `skip`. */
export async function logCommits(
  gitDir: string,
  commit: string,
  prefix: string,
  skip: number,
  count: number,
): Promise<LogEntry[]> {
  if (count <= 0) return [];
  const args = [
    "log",
    "-z",
    "--format=%H%x1f%an%x1f%aI%x1f%B",
    `--skip=${skip}`,
    `--max-count=${count}`,
    commit,
  ];
  if (prefix) args.push("--", prefix);
  const out = (await git(gitDir, args)).toString("utf8");
  return out
    .split("\u0000")
    .filter((r) => r !== "")
    .map((r) => {
      const [id, author, date, message] = r.split("\u001f");
      return { id: id!, author: author!, date: date!, message: (message ?? "").trimEnd(), pending: false };
    });
}

/** Number of commits in `commit`'s history touching `prefix`. */
export async function countCommits(gitDir: string, commit: string, prefix: string): Promise<number> {
  const args = ["rev-list", "--count", commit];
  if (prefix) args.push("--", prefix);
  return Number(await gitText(gitDir, args));
}

/**
 * Bytes [start, end) of blob `sha`, streamed from `git cat-file` and cut as they pass, so memory
 * stays at about `end - start` whatever the blob's size. The child is stopped once `end` is read.
 */
export function readBlobRange(gitDir: string, sha: string, start: number, end: number): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const child = spawn("git", [`--git-dir=${gitDir}`, "cat-file", "blob", sha], {
      env: {
        PATH: process.env.PATH ?? "/usr/bin:/bin",
        HOME: process.env.HOME ?? "/",
        GIT_CONFIG_NOSYSTEM: "1",
      },
      stdio: ["ignore", "pipe", "ignore"],
    });
    const parts: Buffer[] = [];
    let pos = 0;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      resolve(Buffer.concat(parts));
    };
    child.stdout.on("data", (chunk: Buffer) => {
      if (done) return;
      const from = Math.max(start - pos, 0);
      const to = Math.min(end - pos, chunk.length);
      if (to > from) parts.push(chunk.subarray(from, to));
      pos += chunk.length;
      if (pos >= end) {
        finish();
        child.kill("SIGKILL");
      }
    });
    child.on("error", (e) => {
      if (!done) {
        done = true;
        reject(e);
      }
    });
    child.on("close", (code) => {
      if (done) return;
      if (code === 0) finish();
      else {
        done = true;
        reject(new GitFailed(["cat-file"], code, ""));
      }
    });
  });
}
