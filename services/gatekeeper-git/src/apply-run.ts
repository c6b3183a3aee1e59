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
 * - The remote could not be reached (the fetch, or the push's connect) or answered with a refusal
 *   (a hook declined, credentials refused): a known failure of the first naming the remote's
 *   origin and the cause (nothing was written), the rest not sent (apply.ts `publishChecked`).
 * - The push ended without a clear answer (it timed out or the connection broke after the pack may
 *   have been sent): the branch is read where it lives. At the last commit: applied. Anywhere else
 *   (its old tip included: a receive-pack may still complete), or unreadable: AnswerLost
 *   (UNAVAILABLE), so every action of the unit is lost (outcome unknown).
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
  PathRefused,
  settleOutcome,
} from "./apply.ts";
import { GitFailed } from "./git.ts";
import { failed, failedBeforeWriting, publishChecked } from "./publish.ts";
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
          ctx.deadline,
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
 * @param deadline the caller's deadline, epoch ms (Infinity: none); bounds the push.
 * @returns one outcome per commit, ending at the first failure (see the file comment).
 * @throws AnswerLost when the update may have happened and its result cannot be seen.
 */
async function writeCommits(
  up: Upstream,
  gitDir: string,
  branch: string,
  commits: CommitPayload[],
  starting: (n: number) => void,
  deadline: number,
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
      return [failedBeforeWriting(e, up.remoteUrl)];
    }
    if (built.length === 0) return [failure!];
    const last = (JSON.parse(built.at(-1)!.resultJson) as { sha: string }).sha;
    starting(built.length);
    const published = await publishChecked(up, branch, last, start, deadline);
    if (published === "moved") continue;
    if (published !== "ok") return [published];
    return failure ? [...built, failure] : built;
  }
  return [
    failed(`branch ${branch} kept moving while committing (${ATTEMPTS} attempts); nothing was committed`),
  ];
}
