/**
 * `gatehouse approve <ws> --all` and `approve <ws> <id> <id>…`: a batch, recorded at once and
 * followed to its end with progress (batch-follow.ts, batch-progress.ts), and the `--state` filter
 * of `gatehouse actions` its messages point to.
 */
import {
  type ActionRecord,
  ActionStatus,
  actionStatusFromJSON,
  type DecisionsClient,
} from "@gatehouse/proto";
import { followBatch } from "../batch-follow.ts";
import { countsJson, countsText, progressView } from "../batch-progress.ts";
import { call } from "../clients.ts";
import { actionsTable, terminalSafe } from "../output.ts";
import { who } from "./shared.ts";

/** The states `actions --state` takes, lower case. */
export const STATE_NAMES = ["pending", "approved", "applying", "applied", "failed", "rejected"];

/** Batches up to this size print their records' table at the end; larger ones a summary only. */
const TABLE_MAX = 20;

/**
 * `--state <status>` to an ActionStatus ("approved" → ACTION_STATUS_APPROVED).
 * @throws Error naming the flag and the accepted states.
 */
export function parseState(value: string): ActionStatus {
  const name = value.trim().toLowerCase();
  if (!STATE_NAMES.includes(name)) {
    throw new Error(`--state must be one of ${STATE_NAMES.join(", ")} (got "${value}")`);
  }
  return actionStatusFromJSON(`ACTION_STATUS_${name.toUpperCase()}`);
}

/** Names the failed ones of `actions` on stderr and sets exit code 1, when there are any. */
export function reportFailed(actions: ActionRecord[]): void {
  const failed = actions.filter((a) => a.status === ActionStatus.ACTION_STATUS_FAILED);
  if (!failed.length) return;
  process.stderr.write(
    `gatehouse: ${failed.length} approved action(s) failed to apply: ${failed.map((a) => a.id).join(", ")}\n`,
  );
  process.exitCode = 1;
}

/** "3, 5, 8" — or the first `max` and "… (N more)". */
function idList(ids: number[], max = 20): string {
  const head = ids.slice(0, max).join(", ");
  return ids.length > max ? `${head}, … (${ids.length - max} more)` : head;
}

/**
 * Approves `actionIds` (or every pending action, `all`) and shows the batch's progress until each
 * action is final, or nothing happened to the batch for `stallMs`. Prints a summary (with `json`,
 * a last JSON line `{"done", "stalled", counts…, "failedIds", "notFinalIds"}`); exit code 1 when
 * any action failed or the batch stalled.
 * @throws the approve call's error (e.g. an unknown workspace or action).
 */
export async function approveBatch(
  decisions: DecisionsClient,
  workspaceId: string,
  actionIds: number[],
  all: boolean,
  stallMs: number,
  json: boolean,
): Promise<void> {
  const expected = all
    ? (await call(decisions, decisions.listActions, { workspaceId, pendingOnly: true })).actions.map(
        (a) => a.id,
      )
    : actionIds;
  const view = progressView(json);
  let result: Awaited<ReturnType<typeof followBatch>>;
  try {
    result = await followBatch({
      decisions,
      workspaceId,
      actionIds,
      all,
      decidedBy: who(),
      expected,
      stallMs,
      onProgress: (c) => view.update(c),
    });
  } finally {
    view.stop();
  }
  const records = [...result.records.values()].sort((a, b) => a.id - b.id);
  const failedIds = records.filter((a) => a.status === ActionStatus.ACTION_STATUS_FAILED).map((a) => a.id);
  const finalStates = new Set([
    ActionStatus.ACTION_STATUS_APPLIED,
    ActionStatus.ACTION_STATUS_FAILED,
    ActionStatus.ACTION_STATUS_REJECTED,
  ]);
  const notFinalIds = result.recorded
    ? records.filter((a) => !finalStates.has(a.status)).map((a) => a.id)
    : expected.filter(
        (id) => !finalStates.has(result.records.get(id)?.status ?? ActionStatus.ACTION_STATUS_PENDING),
      );
  const c = result.counts;
  if (json) {
    const summary = JSON.parse(countsJson(c)) as Record<string, unknown>;
    process.stdout.write(
      `${JSON.stringify({ done: !result.stalled, stalled: result.stalled, ...summary, failedIds, notFinalIds })}\n`,
    );
  } else {
    if (records.length && records.length <= TABLE_MAX)
      process.stdout.write(`${terminalSafe(actionsTable(records))}\n`);
    process.stdout.write(
      c.approved === 0 && !result.stalled
        ? "no pending actions to approve\n"
        : `approved ${c.approved}: ${countsText(c)}\n`,
    );
  }
  if (failedIds.length) {
    process.stderr.write(
      `gatehouse: ${failedIds.length} approved action(s) failed to apply: ${idList(failedIds)}\n`,
    );
    process.exitCode = 1;
  }
  if (result.stalled) {
    const waited = `${Math.round(stallMs / 1000)} s`;
    const applying = records.filter((a) => a.status === ActionStatus.ACTION_STATUS_APPLYING).map((a) => a.id);
    const waiting = notFinalIds.filter((id) => !applying.includes(id));
    const stuck = [
      waiting.length ? `${waiting.length} approved, waiting for a lifecycle worker (${idList(waiting)})` : "",
      applying.length
        ? `${applying.length} applying, their gatekeeper has not answered (${idList(applying)})`
        : "",
    ]
      .filter(Boolean)
      .join("; ");
    process.stderr.write(
      result.recorded
        ? `gatehouse: nothing happened to the batch for ${waited} (--stall-timeout): ${notFinalIds.length} of ${c.approved} action(s) are not final: ${stuck}. ` +
            `The approvals are recorded and apply when a worker runs — follow them with \`gatehouse actions ${workspaceId} --state approved\` (and --state applying), or wait longer with --stall-timeout 10m\n`
        : `gatehouse: the approval service neither answered the approval nor reported a change to the batch for ${waited} (--stall-timeout); ` +
            `it may still record it — check with \`gatehouse actions ${workspaceId} --state approved\` and \`--pending\`\n`,
    );
    process.exitCode = 1;
  }
}
