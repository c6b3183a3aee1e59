/**
 * Where a repository's branches really live, and the one way they change.
 *
 * - Local (`git+file://`): the repository itself. `refresh` does nothing; `publish` is a
 *   compare-and-swap `update-ref`.
 * - Remote (`git+https://`, `git+ssh://`): a private bare mirror in the cache directory.
 *   `refresh` fetches every branch (`+refs/heads/*:refs/heads/*`, pruned) with the gatekeeper's
 *   credentials, at most once per `fetchIntervalMs` unless forced; `publish` pushes the new commit
 *   with `--force-with-lease=refs/heads/<b>:<old>`, so the remote branch moves only if it still
 *   is where the commit was built on (a compare-and-swap over the network), then records the
 *   new tip in the mirror.
 *
 * Writes to the external system happen only in `publish`, called only from ApplyAction.
 */
import { mkdir } from "node:fs/promises";
import { dirname } from "node:path";
import { GitFailed, git } from "./git.ts";
import { classifyRemoteFailure } from "./remote-outcome.ts";
import { authEnv } from "./remotes.ts";
import type { GitResource } from "./resource-url.ts";

/** Timeout of one fetch or push, milliseconds. */
export const REMOTE_TIMEOUT_MS = 60_000;
const ZERO = "0".repeat(40);

/** Outcome of `publish`: written, or the branch was not at `old` any more (nothing written). */
export type PublishOutcome = "ok" | "moved";

/** Access to a resource's branches. */
export interface Upstream {
  /** The remote repository's URL (git+ prefix removed), or undefined for a local repository. */
  readonly remoteUrl: string | undefined;
  /** Brings the git dir up to date (remote: fetch). @throws GitFailed when the remote cannot be read. */
  refresh(force?: boolean): Promise<void>;
  /**
   * Moves `refs/heads/<branch>` from `old` (null: the branch must not exist) to `next` (a commit
   * present in the git dir). @param timeoutMs longest a remote push may take (default
   * REMOTE_TIMEOUT_MS). @throws GitFailed for any failure other than "moved".
   */
  publish(branch: string, next: string, old: string | null, timeoutMs?: number): Promise<PublishOutcome>;
  /**
   * Where `refs/heads/<branch>` is now at the source of truth (remote: asked over the network,
   * not the mirror), or null when it does not exist; to learn what a failed `publish` did.
   * @param timeoutMs longest a remote read may take (default REMOTE_TIMEOUT_MS).
   * @throws GitFailed when it cannot be read.
   */
  whereIs(branch: string, timeoutMs?: number): Promise<string | null>;
}

/** Fetch bookkeeping shared by every session of a process: last fetch time and in-flight fetches. */
export class FetchTracker {
  readonly #last = new Map<string, number>();
  readonly #inflight = new Map<string, Promise<void>>();
  constructor(readonly fetchIntervalMs: number) {}

  /** Runs `fetch` for `key` unless one ran within the interval (or `force`); joins one in flight. */
  run(key: string, force: boolean, fetch: () => Promise<void>): Promise<void> {
    const inflight = this.#inflight.get(key);
    if (inflight) return force ? inflight.then(() => this.run(key, true, fetch)) : inflight;
    const last = this.#last.get(key);
    if (!force && last !== undefined && Date.now() - last < this.fetchIntervalMs) return Promise.resolve();
    const p = fetch()
      .then(() => {
        this.#last.set(key, Date.now());
      })
      .finally(() => this.#inflight.delete(key));
    this.#inflight.set(key, p);
    return p;
  }
}

/**
 * Where `refs/heads/<branch>` is at the remote `url` (`git ls-remote`), or null when it does not
 * exist. @throws GitFailed when the remote cannot be read (within `timeoutMs`).
 */
export async function remoteBranch(
  gitDir: string,
  url: string,
  env: Record<string, string>,
  branch: string,
  timeoutMs = REMOTE_TIMEOUT_MS,
): Promise<string | null> {
  const out = await git(gitDir, ["ls-remote", "--end-of-options", url, `refs/heads/${branch}`], {
    env,
    timeoutMs,
  });
  const line = out
    .toString("utf8")
    .split("\n")
    .find((l) => l.endsWith(`\trefs/heads/${branch}`));
  return line ? line.split("\t")[0]! : null;
}

class LocalUpstream implements Upstream {
  readonly remoteUrl = undefined;
  constructor(readonly gitDir: string) {}
  async refresh(): Promise<void> {}
  async whereIs(branch: string): Promise<string | null> {
    const out = await git(this.gitDir, ["rev-parse", "--verify", "--quiet", `refs/heads/${branch}`], {
      okCodes: [0, 1],
    });
    return out.toString("utf8").trim() || null;
  }
  async publish(branch: string, next: string, old: string | null): Promise<PublishOutcome> {
    try {
      await git(this.gitDir, [
        "update-ref",
        "-m",
        "gatekeeper-git: approved write",
        `refs/heads/${branch}`,
        next,
        old ?? ZERO,
      ]);
      return "ok";
    } catch (e) {
      if (e instanceof GitFailed) return "moved";
      throw e;
    }
  }
}

class RemoteUpstream implements Upstream {
  readonly #env: Record<string, string>;
  constructor(
    readonly gitDir: string,
    readonly url: string,
    env: Record<string, string>,
    readonly fetches: FetchTracker,
  ) {
    this.#env = env;
  }

  refresh(force = false): Promise<void> {
    return this.fetches.run(this.gitDir, force, async () => {
      await mkdir(dirname(this.gitDir), { recursive: true });
      await git("", ["init", "-q", "--bare", this.gitDir]);
      // Until HEAD names a branch the mirror has (a first fetch may have failed), ask the remote.
      const headOk = await git(this.gitDir, ["rev-parse", "--verify", "--quiet", "HEAD"]).then(
        () => true,
        () => false,
      );
      if (!headOk) {
        // The remote's default branch becomes the mirror's HEAD (what a ref-less read shows).
        const head = (
          await git(this.gitDir, ["ls-remote", "--symref", "--end-of-options", this.url, "HEAD"], {
            env: this.#env,
            timeoutMs: REMOTE_TIMEOUT_MS,
          })
        ).toString("utf8");
        const m = /^ref: (refs\/heads\/[^\t\n]+)\tHEAD/m.exec(head);
        if (m) await git(this.gitDir, ["symbolic-ref", "HEAD", m[1]!]);
      }
      await git(
        this.gitDir,
        ["fetch", "-q", "--prune", "--no-tags", "--end-of-options", this.url, "+refs/heads/*:refs/heads/*"],
        { env: this.#env, timeoutMs: REMOTE_TIMEOUT_MS },
      );
    });
  }

  get remoteUrl(): string {
    return this.url;
  }

  whereIs(branch: string, timeoutMs = REMOTE_TIMEOUT_MS): Promise<string | null> {
    return remoteBranch(this.gitDir, this.url, this.#env, branch, timeoutMs);
  }

  async publish(
    branch: string,
    next: string,
    old: string | null,
    timeoutMs = REMOTE_TIMEOUT_MS,
  ): Promise<PublishOutcome> {
    const ref = `refs/heads/${branch}`;
    try {
      await git(
        this.gitDir,
        [
          "push",
          "-q",
          `--force-with-lease=${ref}:${old ?? ""}`,
          "--end-of-options",
          this.url,
          `${next}:${ref}`,
        ],
        { env: this.#env, timeoutMs },
      );
    } catch (e) {
      if (e instanceof GitFailed && classifyRemoteFailure(e).kind === "moved") return "moved";
      throw e;
    }
    await git(this.gitDir, ["update-ref", ref, next]);
    return "ok";
  }
}

/** The upstream of `resource`; remote ones share `fetches` for throttling. */
export function upstreamFor(resource: GitResource, fetches: FetchTracker): Upstream {
  if (!resource.remote) return new LocalUpstream(resource.gitDir);
  return new RemoteUpstream(
    resource.gitDir,
    resource.remote.url,
    authEnv(resource.remote.rule.auth),
    fetches,
  );
}
