/**
 * ApplyActions for git: consecutive commits of a run on one branch become one unit (the kit's
 * RunUnits) written with ONE ref update. Every other kind (createBranch, push) and a lone commit
 * go through `applyAction`, one at a time.
 *
 * A unit, under the repository's lock: a forced refresh, then each commit built with plumbing on
 * the previous one (the first on the branch tip), with the same rebase rule as one commit (each
 * changed path must still hold what the agent based it on, here at the commit before it); then the
 * branch moves once, by compare-and-swap (local: update-ref; remote: push --force-with-lease),
 * from the tip to the last commit built. Each action's outcome carries its own commit's sha.
 *
 * - A commit k that cannot be built (conflict, a path git refuses): commits before k are published
 *   with the one ref update and reported applied, k fails with its reason, the rest are not sent.
 * - The branch moved before the update (the compare-and-swap refused: certainly not moved by us):
 *   all is rebuilt on the new tip, up to ATTEMPTS times; then the first fails ("kept moving"), and
 *   the others are not sent.
 * - The ref update itself failed without a clear answer (a push that timed out or broke): the
 *   branch is looked up where it lives. At the last commit: applied. At the old tip: a known
 *   failure of the first (nothing was written), the rest not sent. Anywhere else, or unreadable:
 *   PublishUnknown (UNAVAILABLE), so every action of the unit is lost (outcome unknown).
 */
import type { RunUnits } from "@gatehouse/gatekeeper-kit";
import type { ApplyActionRequest, ApplyActionResponse } from "@gatehouse/proto";
import {
  type ApplyDeps,
  ATTEMPTS,
  appliedKey,
  buildCommit,
  type CheckedWrite,
  checkWrite,
  conflictingPaths,
  failed,
  gitWhy,
  PathRefused,
  settleOutcome,
} from "./apply.ts";
import { PublishUnknown } from "./errors.ts";
import { GitFailed } from "./git.ts";
import { branchExists, resolveCommit } from "./repo.ts";
import type { CommitPayload } from "./state.ts";
import { type Upstream, upstreamFor } from "./upstream.ts";

/** A commit write, checked. */
type CommitWrite = CheckedWrite & { payload: CommitPayload };

function commitWrite(req: ApplyActionRequest, deps: ApplyDeps): CommitWrite | undefined {
  try {
    const w = checkWrite(req, deps.policy);
    return w.payload.kind === undefined || w.payload.kind === "commit" ? (w as CommitWrite) : undefined;
  } catch {
    return undefined; // applyAction refuses it on its own, with its reason
  }
}

/** The RunUnits of gatekeeper-git (see the file comment). */
export function gitRunUnits(deps: ApplyDeps): RunUnits {
  return {
    sizeAt(reqs, from) {
      const first = reqs[from] && commitWrite(reqs[from], deps);
      if (!first) return 1;
      let n = 0;
      for (let i = from; i < reqs.length; i++) {
        const req = reqs[i]!;
        const w = commitWrite(req, deps);
        if (!w || w.branch !== first.branch || w.resource.gitDir !== first.resource.gitDir) break;
        if (deps.state.applied.has(appliedKey(req))) break;
        n++;
      }
      return Math.max(1, n);
    },
    async apply(reqs, ctx) {
      const writes = reqs.map((r) => {
        const w = commitWrite(r, deps);
        if (!w) throw new Error("a unit holds a write sizeAt would not group");
        return w;
      });
      const { resource, branch } = writes[0]!;
      const st = deps.state.binding(reqs[0]!.workspaceId, reqs[0]!.binding);
      const up = upstreamFor(resource, deps.state.fetches);
      const unit = deps.state.serialize(resource.gitDir, () =>
        writeCommits(
          up,
          resource.gitDir,
          branch,
          writes.map((w) => w.payload),
          (n) => ctx.starting(reqs.slice(0, n).map((r) => r.actionId)),
        ),
      );
      // At most once: a later ApplyAction of any of these ids answers from here, never writes.
      reqs.forEach((r, k) => {
        const answer = unit.then(
          (outs) => outs[k] ?? failed("not performed: an earlier commit of its run failed"),
        );
        answer.catch(() => undefined); // awaited only by a repeated ApplyAction, if any
        deps.state.applied.set(appliedKey(r), answer);
      });
      const outcomes = await unit;
      reqs.forEach((r, k) => {
        const res = outcomes[k];
        if (res) settleOutcome(st, r, writes[k]!.payload, res, deps.logger);
        else deps.state.applied.delete(appliedKey(r)); // not performed: it may be sent again
      });
      return outcomes;
    },
  };
}

/**
 * Builds `commits` in order on `branch`'s tip and publishes them with one ref update.
 * @param starting called with how many commits the update will publish, right before it.
 * @returns one outcome per commit, ending at the first failure (see the file comment).
 * @throws PublishUnknown when the update may have happened and its result cannot be seen.
 */
async function writeCommits(
  up: Upstream,
  gitDir: string,
  branch: string,
  commits: CommitPayload[],
  starting: (n: number) => void,
): Promise<ApplyActionResponse[]> {
  for (let attempt = 0; attempt < ATTEMPTS; attempt++) {
    let start: string;
    const built: ApplyActionResponse[] = [];
    let failure: ApplyActionResponse | undefined;
    try {
      await up.refresh(true);
      if (!(await branchExists(gitDir, branch))) {
        return [failed(`branch ${branch} no longer exists; nothing was committed`)];
      }
      start = await resolveCommit(gitDir, branch);
      let tip = start;
      for (const p of commits) {
        const conflicts = await conflictingPaths(gitDir, p, tip);
        if (conflicts.length > 0) {
          failure = failed(
            `branch ${branch} moved and these paths changed since the commit was made: ${conflicts.join(", ")}; nothing was committed`,
          );
          break;
        }
        let sha: string;
        try {
          sha = await buildCommit(gitDir, p, tip);
        } catch (e) {
          if (!(e instanceof PathRefused)) throw e;
          failure = failed(e.message);
          break;
        }
        built.push({
          ok: true,
          resultJson: JSON.stringify({ sha, branch, rebased: tip !== p.parent }),
          error: "",
        });
        tip = sha;
      }
    } catch (e) {
      if (!(e instanceof GitFailed)) throw e;
      return [failed(`git ${e.args[0]} failed (${gitWhy(e)}); nothing was written`)];
    }
    if (built.length === 0) return [failure!];
    const last = (JSON.parse(built.at(-1)!.resultJson) as { sha: string }).sha;
    starting(built.length);
    const published = await publishOnce(up, branch, last, start, built.length);
    if (published === "moved") continue;
    if (published !== "ok") return [published];
    return failure ? [...built, failure] : built;
  }
  return [
    failed(`branch ${branch} kept moving while committing (${ATTEMPTS} attempts); nothing was committed`),
  ];
}

/**
 * The one ref update of a unit: "ok", "moved" (not moved by us; rebuild), or a known failure.
 * @throws PublishUnknown when it failed without a clear answer and the branch is neither at
 *   `next` nor at `old` (or cannot be read).
 */
async function publishOnce(
  up: Upstream,
  branch: string,
  next: string,
  old: string,
  count: number,
): Promise<"ok" | "moved" | ApplyActionResponse> {
  try {
    return await up.publish(branch, next, old);
  } catch (e) {
    if (!(e instanceof GitFailed)) throw e;
    const now = await up.whereIs(branch).catch(() => undefined);
    if (now === next) return "ok";
    if (now === old) {
      return failed(`git ${e.args[0]} failed (${gitWhy(e)}); nothing was written`);
    }
    throw new PublishUnknown(
      `the update of branch ${branch} with ${count} commit(s) ended without an answer (git ${e.args[0]}: ${gitWhy(e)}) and the branch could not be seen at either the old tip or the new one; it may have been written, so the outcome is unknown: check the branch before acting again`,
    );
  }
}
