/**
 * Publishing a write where its branch lives, and what the attempt says about the outcome (the
 * kit's apply outcome taxonomy; git's texts are read in remote-outcome.ts):
 *
 * - `publishChecked`: the one ref update of a commit, a run of commits or a new branch (local:
 *   update-ref; remote: push --force-with-lease), with an unclear push settled by reading the
 *   remote branch.
 * - `pushBranch`: the push action (a local branch to its allowed remote, fast-forward only).
 * - `failed`, `failedBeforeWriting`, `gitWhy`: known failures and their messages.
 */
import { faultMessage } from "@gatehouse/gatekeeper-kit";
import type { ApplyActionResponse } from "@gatehouse/proto";
import { GitFailed, git } from "./git.ts";
import {
  classifyRemoteFailure,
  readFailureMessage,
  remoteBudget,
  settleUnclearPublish,
} from "./remote-outcome.ts";
import { authEnv, ruleFor } from "./remotes.ts";
import { branchExists, resolveCommit } from "./repo.ts";
import type { ResourcePolicy } from "./resource-url.ts";
import type { PushPayload } from "./state.ts";
import { REMOTE_TIMEOUT_MS, remoteBranch, type Upstream } from "./upstream.ts";
import { remoteUrlOf } from "./writes.ts";

/** A known failure with `error` as its message. */
export function failed(error: string): ApplyActionResponse {
  return { ok: false, resultJson: "", error };
}

/** First non-empty stderr line of a git failure, for messages (never file content). */
export function gitWhy(e: GitFailed): string {
  return (e.stderr.split("\n").find((l) => l.trim() !== "") ?? `exit ${e.exitCode}`).slice(0, 300);
}

/**
 * The failure of a git run before anything was written (a local step, or the fetch or read of the
 * remote before the write): names the remote's origin and the cause when `remoteUrl` could not
 * be reached.
 */
export function failedBeforeWriting(e: GitFailed, remoteUrl: string | undefined): ApplyActionResponse {
  if (remoteUrl !== undefined && (e.args[0] === "fetch" || e.args[0] === "ls-remote")) {
    return failed(readFailureMessage("reading the remote before writing", remoteUrl, e));
  }
  return failed(`git ${e.args[0]} failed (${gitWhy(e)}); nothing was written`);
}

/**
 * Moves `branch` from `old` (null: must not exist) to `next` where it lives, and says what that
 * did: "ok", "moved" (the remote answered the branch is elsewhere; nothing written), or a known
 * failure (the remote refused, or could not be reached: nothing written). A push that ended
 * without a clear answer is settled by reading the remote branch (remote-outcome.ts).
 * @param deadline the caller's deadline, epoch ms (Infinity: none); bounds the push and the read.
 * @throws AnswerLost when the push may have happened and the branch is not seen at `next`.
 */
export async function publishChecked(
  up: Upstream,
  branch: string,
  next: string,
  old: string | null,
  deadline: number,
): Promise<"ok" | "moved" | ApplyActionResponse> {
  const budget = remoteBudget(deadline, REMOTE_TIMEOUT_MS);
  try {
    const outcome = await up.publish(branch, next, old, budget.pushMs);
    if (outcome === "moved" && up.remoteUrl !== undefined) {
      // curl resends a request whose connection died unanswered: the remote then refuses the
      // resend of a push that happened. The branch at `next` (a sha only this apply built) says so.
      if ((await up.whereIs(branch, budget.readMs).catch(() => undefined)) === next) return "ok";
    }
    return outcome;
  } catch (e) {
    if (!(e instanceof GitFailed) || up.remoteUrl === undefined) throw e;
    const url = up.remoteUrl;
    const f = classifyRemoteFailure(e);
    const what = `pushing branch ${branch}`;
    if (f.kind === "moved" || f.kind === "refused") {
      // A refusal of curl's resend (its ref lock now fails) follows a push that happened.
      if ((await up.whereIs(branch, budget.readMs).catch(() => undefined)) === next) return "ok";
      if (f.kind === "moved") return "moved";
      return failed(`git push failed (${f.why}); the remote refused it, nothing was written`);
    }
    if (f.kind === "not-sent") return failed(`${faultMessage(what, url, f.fault)}; nothing was written`);
    return settleUnclearPublish(what, url, f.fault, next, () => up.whereIs(branch, budget.readMs));
  }
}

/**
 * The push action: reads the remote branch first (a remote that cannot be reached fails here,
 * nothing sent; already at the commit: applied), then pushes fast-forward only; an unclear push is
 * settled by reading the branch again (remote-outcome.ts).
 */
export async function pushBranch(
  gitDir: string,
  p: PushPayload,
  policy: ResourcePolicy,
  deadline: number,
): Promise<ApplyActionResponse> {
  const url = await remoteUrlOf(gitDir, p.remote);
  if (url !== p.remoteUrl) {
    return failed(
      `remote ${p.remote} now points elsewhere than when the push was staged; nothing was pushed`,
    );
  }
  const rule = ruleFor(policy.remotes, url);
  if (!rule)
    return failed(`remote ${p.remote} is no longer allowed by the administrator; nothing was pushed`);
  if (!(await branchExists(gitDir, p.branch)))
    return failed(`branch ${p.branch} does not exist; nothing was pushed`);
  const sha = await resolveCommit(gitDir, p.branch);
  const env = authEnv(rule.auth);
  const done = {
    ok: true,
    resultJson: JSON.stringify({ branch: p.branch, remote: p.remote, sha }),
    error: "",
  };
  const budget = remoteBudget(deadline, REMOTE_TIMEOUT_MS);
  const what = `pushing branch ${p.branch}`;
  try {
    if ((await remoteBranch(gitDir, url, env, p.branch, budget.pushMs)) === sha) return done;
  } catch (e) {
    if (!(e instanceof GitFailed)) throw e;
    return failed(readFailureMessage(`reading the remote's ${p.branch} before ${what}`, url, e));
  }
  try {
    await git(gitDir, ["push", "-q", "--end-of-options", url, `${sha}:refs/heads/${p.branch}`], {
      env,
      timeoutMs: remoteBudget(deadline, REMOTE_TIMEOUT_MS).pushMs,
    });
  } catch (e) {
    if (!(e instanceof GitFailed)) throw e;
    const f = classifyRemoteFailure(e);
    if (f.kind === "moved" || f.kind === "refused") {
      // A refusal of curl's resend follows a push that happened: the branch at the commit says so.
      const now = await remoteBranch(gitDir, url, env, p.branch, budget.readMs).catch(() => undefined);
      if (now === sha) return done;
    }
    if (f.kind === "moved") {
      return failed(
        `the remote's ${p.branch} has commits this repository lacks (not a fast-forward); nothing was pushed`,
      );
    }
    if (f.kind === "refused")
      return failed(`git push failed (${f.why}); the remote refused it, nothing was pushed`);
    if (f.kind === "not-sent") return failed(`${faultMessage(what, url, f.fault)}; nothing was pushed`);
    await settleUnclearPublish(what, url, f.fault, sha, () =>
      remoteBranch(gitDir, url, env, p.branch, budget.readMs),
    );
  }
  return done;
}
