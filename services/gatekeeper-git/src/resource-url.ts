/**
 * Resource URLs of the git gatekeeper, parsed fail-closed:
 *
 * - `git+file:///abs/path/repo.git` — a local repository under one of the admin's allowed roots;
 * - `git+https://host/org/repo.git`, `git+ssh://git@host/org/repo.git` (`git+http://` on loopback
 *   only) — a remote repository an administrator allowed (remotes.ts), served from a private
 *   mirror in the gatekeeper's cache directory, with the gatekeeper's credentials;
 * - optional fragment `#branch=<name>` and/or `#path=<prefix>/` joined by `&`. An unknown key, a
 *   repeated key or an empty value is an error naming that part.
 */
import { createHash } from "node:crypto";
import { existsSync, realpathSync, statSync } from "node:fs";
import { isAbsolute, join, normalize, sep } from "node:path";
import { InvalidResourceUrl } from "./errors.ts";
import { isAcceptableRemoteUrl, type RemoteRule, ruleFor } from "./remotes.ts";

/** What an administrator allows: local roots, remote prefixes, and where mirrors live. */
export interface ResourcePolicy {
  /** Absolute directories under which local repositories may be served. */
  allowedRoots: readonly string[];
  /** Remote prefixes with their credentials (empty: no remote is allowed). */
  remotes: readonly RemoteRule[];
  /** Absolute directory for the mirrors of remote repositories. */
  cacheDir: string;
}

/** A parsed, allowed repository resource (local, or remote with its mirror). */
export interface GitResource {
  /** Local: absolute, real path of the repository. Remote: the remote URL. */
  repoPath: string;
  /** The git dir (local: the repo itself when bare, else `<repo>/.git`; remote: its mirror). */
  gitDir: string;
  /** Set for a remote repository: its URL (no `git+`) and the admin's rule that allows it. */
  remote: { url: string; rule: RemoteRule } | undefined;
  /** True when the admin marked the repository restricted: reads latch the workspace. */
  restricted: boolean;
  /** Branch the binding is narrowed to, if any. */
  branch: string | undefined;
  /** Path prefix the binding is narrowed to ("" = whole repository; else ends with "/"). */
  pathPrefix: string;
  /** Canonical URL (fragment keys in a fixed order). */
  normalizedUrl: string;
}

const BRANCH = /^(?!-)(?!.*\.\.)(?!.*\/\/)(?!.*\/$)(?!.*\.lock$)[A-Za-z0-9._/-]{1,200}$/;

/** True when `name` is a branch name this gatekeeper accepts (conservative subset of git's rules). */
export function isValidBranchName(name: string): boolean {
  return BRANCH.test(name) && !name.startsWith("/") && !name.split("/").some((c) => c.startsWith("."));
}

/**
 * Normalizes a repository-relative path: no leading "/", no "." / ".." / empty segments, no NUL.
 * @returns the path without a trailing "/".
 * @throws Error (message names the problem) — callers wrap it in their own error class.
 */
export function cleanRelPath(path: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: refusing control characters on purpose
  if (path.length === 0 || path.length > 4096 || /[\u0000-\u001f\\]/.test(path)) {
    throw new Error("must be a non-empty relative path without control characters or backslashes");
  }
  if (path.startsWith("/")) throw new Error("must be relative to the repository root (no leading /)");
  const parts = path.replace(/\/$/, "").split("/");
  for (const p of parts) {
    if (p === "..") throw new Error("must not contain '..' segments");
    if (p === "." || p === "") throw new Error("must not contain '.' or empty segments");
    // Every spelling git itself refuses for .git (case, trailing dots/spaces, the NTFS short name).
    if (p.toLowerCase().replace(/[. ]+$/, "") === ".git" || /^git~\d+$/i.test(p)) {
      throw new Error("must not name .git (in any spelling)");
    }
  }
  return parts.join("/");
}

function parseFragment(fragment: string): { branch: string | undefined; pathPrefix: string } {
  let branch: string | undefined;
  let pathPrefix: string | undefined;
  if (fragment === "")
    throw new InvalidResourceUrl("the fragment after '#' is empty; drop the '#' or add branch=/path=");
  for (const part of fragment.split("&")) {
    const eq = part.indexOf("=");
    const key = eq < 0 ? part : part.slice(0, eq);
    let value: string;
    try {
      value = eq < 0 ? "" : decodeURIComponent(part.slice(eq + 1));
    } catch {
      throw new InvalidResourceUrl(`fragment part "${key}=" has a malformed percent-encoding`);
    }
    if (key === "branch") {
      if (branch !== undefined) throw new InvalidResourceUrl('fragment key "branch" appears more than once');
      if (value === "") throw new InvalidResourceUrl('fragment part "branch=" has an empty value');
      if (!isValidBranchName(value))
        throw new InvalidResourceUrl(`fragment part "branch=" is not a valid branch name`);
      branch = value;
    } else if (key === "path") {
      if (pathPrefix !== undefined)
        throw new InvalidResourceUrl('fragment key "path" appears more than once');
      if (value === "") throw new InvalidResourceUrl('fragment part "path=" has an empty value');
      try {
        pathPrefix = `${cleanRelPath(value)}/`;
      } catch (e) {
        throw new InvalidResourceUrl(`fragment part "path=" ${(e as Error).message}`);
      }
    } else {
      const shown = key.replace(/[^A-Za-z0-9_-]/g, "?").slice(0, 40);
      throw new InvalidResourceUrl(`unknown fragment key "${shown}"; only branch= and path= are allowed`);
    }
  }
  return { branch, pathPrefix: pathPrefix ?? "" };
}

function underRoot(path: string, root: string): boolean {
  const r = root.endsWith(sep) ? root : root + sep;
  return path === root || path.startsWith(r);
}

function fragmentOut(branch: string | undefined, pathPrefix: string): string {
  const out = [
    ...(branch !== undefined ? [`branch=${encodeURIComponent(branch).replace(/%2F/g, "/")}`] : []),
    ...(pathPrefix ? [`path=${encodeURI(pathPrefix)}`] : []),
  ].join("&");
  return out ? `#${out}` : "";
}

function parseRemote(base: string, frag: string | undefined, policy: ResourcePolicy): GitResource {
  const remoteUrl = base.slice("git+".length);
  const afterHost = remoteUrl.replace(/^[a-z]+:\/\/[^/]*/, "");
  if (afterHost.split("/").some((p) => p === ".." || p === ".") || /%2e/i.test(afterHost)) {
    throw new InvalidResourceUrl("the repository path of a remote URL must not contain '.' or '..' segments");
  }
  if (/^[a-z]+:\/\/[^/@]*:[^/@]*@/.test(remoteUrl)) {
    throw new InvalidResourceUrl(
      "a remote URL must not carry a password; the gatekeeper holds the credentials (GATEKEEPER_GIT_REMOTES)",
    );
  }
  if (!isAcceptableRemoteUrl(remoteUrl) || afterHost.length < 2) {
    throw new InvalidResourceUrl(
      "a remote URL must be git+https://host/path or git+ssh://user@host/path (git+http:// only on loopback), without a query",
    );
  }
  const rule = ruleFor(policy.remotes, remoteUrl);
  if (!rule) {
    throw new InvalidResourceUrl(
      "no administrator-allowed remote covers this repository URL; ask an administrator to add its prefix to GATEKEEPER_GIT_REMOTES",
    );
  }
  const { branch, pathPrefix } =
    frag === undefined ? { branch: undefined, pathPrefix: "" } : parseFragment(frag);
  const key = createHash("sha256").update(remoteUrl).digest("hex").slice(0, 32);
  return {
    repoPath: remoteUrl,
    gitDir: join(policy.cacheDir, "mirrors", `${key}.git`),
    remote: { url: remoteUrl, rule },
    restricted: rule.restricted,
    branch,
    pathPrefix,
    normalizedUrl: `git+${remoteUrl}${fragmentOut(branch, pathPrefix)}`,
  };
}

/**
 * Parses and checks `url` against the admin's `policy`.
 * @throws InvalidResourceUrl naming the part at fault (scheme, host not allowed, path, fragment).
 */
export function parseGitResource(url: string, policy: ResourcePolicy): GitResource {
  const hash = url.indexOf("#");
  const base = hash < 0 ? url : url.slice(0, hash);
  const frag = hash < 0 ? undefined : url.slice(hash + 1);
  const scheme = /^([a-z+]+):\/\//.exec(base)?.[1];
  if (scheme === "git+https" || scheme === "git+ssh" || scheme === "git+http") {
    return parseRemote(base, frag, policy);
  }
  if (scheme !== "git+file") {
    throw new InvalidResourceUrl(
      'the URL scheme must be "git+file://", "git+https://" or "git+ssh://" (e.g. git+https://git.example.com/org/repo.git)',
    );
  }
  const allowedRoots = policy.allowedRoots;
  const rest = base.slice("git+file://".length);
  if (!rest.startsWith("/")) {
    throw new InvalidResourceUrl(
      "the git+file URL must have an empty host and an absolute path: git+file:///abs/path",
    );
  }
  let path: string;
  try {
    path = decodeURIComponent(rest);
  } catch {
    throw new InvalidResourceUrl("the path of the git+file URL has a malformed percent-encoding");
  }
  if (!isAbsolute(path) || path.split("/").includes("..") || path.includes("\0")) {
    throw new InvalidResourceUrl("the path of the git+file URL must be absolute with no '..' segments");
  }
  const { branch, pathPrefix } =
    frag === undefined ? { branch: undefined, pathPrefix: "" } : parseFragment(frag);
  if (!existsSync(path) || !statSync(path).isDirectory()) {
    throw new InvalidResourceUrl("the path of the git+file URL is not an existing directory");
  }
  const real = realpathSync(normalize(path));
  const roots = allowedRoots.map((r) => (existsSync(r) ? realpathSync(r) : normalize(r)));
  if (!roots.some((r) => underRoot(real, r))) {
    throw new InvalidResourceUrl(
      "the repository path is not under an allowed root (GATEKEEPER_GIT_ALLOWED_ROOTS); ask an administrator",
    );
  }
  const dotGit = join(real, ".git");
  const gitDir = existsSync(dotGit) ? dotGit : real;
  return {
    repoPath: real,
    gitDir,
    remote: undefined,
    restricted: false,
    branch,
    pathPrefix,
    normalizedUrl: `git+file://${encodeURI(real)}${fragmentOut(branch, pathPrefix)}`,
  };
}
