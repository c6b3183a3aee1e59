/**
 * Scope checks (`#path=` prefix). A caller path is checked BEFORE any git call names it: `..`,
 * `.`, absolute paths and paths outside the prefix are refused outright. Symlinks are resolved
 * only through tree entries inside the prefix; a link whose target leaves the prefix is refused
 * without git ever being asked about the target.
 */
import { posix } from "node:path";
import { ScopeViolation } from "./errors.ts";
import { lsPaths, readBlob, type TreeEntry } from "./repo.ts";
import { cleanRelPath } from "./resource-url.ts";

/**
 * The cleaned path when it lies inside `prefix` ("" = whole repository).
 * @throws ScopeViolation naming the problem; nothing is run.
 */
export function checkScopedPath(prefix: string, path: unknown, what = "path"): string {
  if (typeof path !== "string") throw new ScopeViolation(`${what} must be a string`);
  let clean: string;
  try {
    clean = cleanRelPath(path);
  } catch (e) {
    throw new ScopeViolation(`${what} ${(e as Error).message}`);
  }
  if (prefix && !`${clean}/`.startsWith(prefix)) {
    throw new ScopeViolation(
      `${what} is outside this binding's scope (#path=${prefix}); not read or written`,
    );
  }
  return clean;
}

/**
 * Follows symlinks on the way to `path` at `commit` (at most 8 hops), each target checked with
 * `checkScopedPath` before it is looked up.
 * @returns the in-scope path the content lives at.
 * @throws ScopeViolation when a link leaves the scope (or loops).
 */
export async function resolveInScope(
  gitDir: string,
  commit: string,
  prefix: string,
  path: string,
): Promise<string> {
  return (await resolveEntryInScope(gitDir, commit, prefix, path)).path;
}

/**
 * As `resolveInScope`, also returning the tree entry found at the resolved path (undefined when
 * nothing is there), from the same `ls-tree` call.
 */
export async function resolveEntryInScope(
  gitDir: string,
  commit: string,
  prefix: string,
  path: string,
): Promise<{ path: string; entry: TreeEntry | undefined }> {
  let current = path;
  for (let hop = 0; hop < 8; hop++) {
    const parts = current.split("/");
    const ancestors = parts.map((_, i) => parts.slice(0, i + 1).join("/"));
    const entries = await lsPaths(gitDir, commit, ancestors);
    const link = ancestors.map((a) => entries.find((e) => e.path === a)).find((e) => e?.mode === "120000");
    if (!link) return { path: current, entry: entries.find((e) => e.path === current) };
    const target = (await readBlob(gitDir, link.sha)).toString("utf8");
    const rest = current.slice(link.path.length);
    const joined = target.startsWith("/")
      ? null
      : posix.normalize(posix.join(posix.dirname(link.path), target) + rest);
    if (joined === null || joined.startsWith("../") || joined === ".." || joined.startsWith("/")) {
      throw new ScopeViolation(`${link.path} is a symlink pointing outside the repository; refused`);
    }
    current = checkScopedPath(prefix, joined, `the symlink ${link.path} points to a path that`);
  }
  throw new ScopeViolation(`too many symlinks on the way to ${path}; refused`);
}
