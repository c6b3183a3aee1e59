/**
 * What `gatehouse approve` prints once a followed batch (batch-follow.ts) ended: the summary (a
 * table for small batches, the counts; with `--json` one last JSON line), the failed and
 * outcome-unknown ids, and, when it ended early, why — a stall (naming the service that is down,
 * or what is stuck while it answers) or Ctrl-C (what is recorded and what still applies).
 */
import { ActionRecord, ActionStatus } from "@gatehouse/proto";
import type { BatchResult } from "./batch-follow.ts";
import { countsJson, countsText, outcomesText } from "./batch-progress.ts";
import { actionsTable, terminalSafe } from "./output.ts";

/** Batches up to this size print their records' table at the end; larger ones a summary only. */
const TABLE_MAX = 20;

/** The exit code of a command ended by Ctrl-C (128 + SIGINT). */
export const INTERRUPTED_EXIT_CODE = 130;

const FINAL = new Set([
  ActionStatus.ACTION_STATUS_APPLIED,
  ActionStatus.ACTION_STATUS_FAILED,
  ActionStatus.ACTION_STATUS_REJECTED,
]);

/** "3, 5, 8" — or the first `max` and "… (N more)". */
export function idList(ids: number[], max = 20): string {
  const head = ids.slice(0, max).join(", ");
  return ids.length > max ? `${head}, … (${ids.length - max} more)` : head;
}

/** Where the batch ended, for the report. */
export interface ReportContext {
  workspaceId: string;
  /** The ids the batch was expected to hold (for the not-final ones when nothing was recorded). */
  expected: number[];
  stallMs: number;
  json: boolean;
  /**
   * With a stall: the approval service's error when it did not answer a probe after the stall
   * (e.g. "UNAVAILABLE: No connection established"), with its address; undefined when it answered.
   */
  serviceDown?: { address: string; error: string };
}

/**
 * Prints the batch's summary on stdout and any failure, stall or interruption on stderr, and sets
 * the exit code: 130 when interrupted, else 1 when an action failed (or its outcome is unknown) or
 * the batch stalled, else unchanged (0).
 */
export function reportBatch(result: BatchResult, x: ReportContext): void {
  const { records, failedIds, outcomeUnknownIds, notFinalIds } = outcomes(result, x);
  const c = result.counts;
  const ended = !result.stalled && !result.interrupted;
  if (x.json) {
    const summary = JSON.parse(countsJson(c)) as Record<string, unknown>;
    const last = {
      done: ended,
      stalled: result.stalled,
      interrupted: result.interrupted,
      recorded: result.recorded,
    };
    process.stdout.write(
      `${JSON.stringify({ ...last, ...summary, failedIds, outcomeUnknownIds, notFinalIds })}\n`,
    );
  } else {
    if (ended && records.length && records.length <= TABLE_MAX)
      process.stdout.write(`${terminalSafe(actionsTable(records))}\n`);
    process.stdout.write(
      c.approved === 0 && ended
        ? "no pending actions to approve\n"
        : `approved ${c.approved}: ${countsText(c)}\n`,
    );
  }
  reportEnd(result, x, { records, failedIds, outcomeUnknownIds, notFinalIds });
}

/** A followed batch's records by id and the ids of each way it ended. */
interface Outcomes {
  /** The latest record of each action of the batch, by id. */
  records: ActionRecord[];
  failedIds: number[];
  outcomeUnknownIds: number[];
  /** Not applied, failed or rejected when the follow ended (stalled or interrupted). */
  notFinalIds: number[];
}

function outcomes(result: BatchResult, x: ReportContext): Outcomes {
  const records = [...result.records.values()].sort((a, b) => a.id - b.id);
  const failed = (unknown: boolean) =>
    records
      .filter((a) => a.status === ActionStatus.ACTION_STATUS_FAILED && a.outcomeUnknown === unknown)
      .map((a) => a.id);
  const notFinalIds = result.recorded
    ? records.filter((a) => !FINAL.has(a.status)).map((a) => a.id)
    : x.expected.filter(
        (id) => !FINAL.has(result.records.get(id)?.status ?? ActionStatus.ACTION_STATUS_PENDING),
      );
  return { records, failedIds: failed(false), outcomeUnknownIds: failed(true), notFinalIds };
}

/**
 * What `gatehouse approve <ws> <id>` prints once its approval (followed like a batch) ended: on
 * stdout the final records of the action, the dependencies approved with it and any cascade — a
 * table, or with `json` the JSON array of ActionRecords (`gatehouse actions --json`'s shape) — and
 * on stderr, with the exit codes of {@link reportBatch}, the failed and outcome-unknown ids and why
 * the follow ended early (stall, Ctrl-C).
 */
export function reportApproved(result: BatchResult, x: ReportContext): void {
  const o = outcomes(result, x);
  if (x.json) {
    process.stdout.write(
      `${JSON.stringify(
        o.records.map((a) => ActionRecord.toJSON(a)),
        null,
        2,
      )}\n`,
    );
  } else if (o.records.length) {
    process.stdout.write(`${terminalSafe(actionsTable(o.records))}\n`);
  }
  reportEnd(result, x, o);
}

/**
 * The failed and outcome-unknown ids and a stall or interruption on stderr, and the exit code: 130
 * when interrupted, else 1 when an action failed (or its outcome is unknown) or the follow stalled.
 */
function reportEnd(result: BatchResult, x: ReportContext, o: Outcomes): void {
  const { records, failedIds, outcomeUnknownIds, notFinalIds } = o;
  if (failedIds.length) {
    process.stderr.write(
      `gatehouse: ${failedIds.length} approved action(s) failed to apply: ${idList(failedIds)}\n`,
    );
    process.exitCode = 1;
  }
  if (outcomeUnknownIds.length) {
    process.stderr.write(
      `gatehouse: ${outcomeUnknownIds.length} approved action(s) have an unknown outcome (the request may have reached the system and its answer was lost: a connection cut, a timeout or a crash; check the system before doing it again; \`gatehouse show ${x.workspaceId} <id>\` gives the reason): ${idList(outcomeUnknownIds)}\n`,
    );
    process.exitCode = 1;
  }
  if (result.interrupted) {
    process.stderr.write(`${interruptedText(result, notFinalIds, x)}\n`);
    process.exitCode = INTERRUPTED_EXIT_CODE;
  } else if (result.stalled) {
    process.stderr.write(`${stalledText(result, records, notFinalIds, x)}\n`);
    process.exitCode = 1;
  }
}

/** Ctrl-C: what is recorded, what is final, and that the rest goes on applying on the server. */
function interruptedText(result: BatchResult, notFinalIds: number[], x: ReportContext): string {
  const follow = `\`gatehouse actions ${x.workspaceId} --state approved --state applying\``;
  if (!result.recorded) {
    return (
      "gatehouse: interrupted before the approval service answered the approval: it may still record it — " +
      `check with ${follow} (and --pending)`
    );
  }
  const c = result.counts;
  return (
    `gatehouse: interrupted; the ${c.approved} approval(s) are recorded (${outcomesText(c)} so far) ` +
    `and ${notFinalIds.length} still applying: applying continues on the server without this command` +
    (notFinalIds.length ? ` (${idList(notFinalIds)}); follow them with ${follow}` : "")
  );
}

/** A stall: the approval service down (named), or what is stuck while it answers. */
function stalledText(
  result: BatchResult,
  records: ActionRecord[],
  notFinalIds: number[],
  x: ReportContext,
): string {
  const waited = `${Math.round(x.stallMs / 1000)} s`;
  const c = result.counts;
  if (x.serviceDown) {
    return (
      `gatehouse: the approval service at ${x.serviceDown.address} is not answering (${x.serviceDown.error}); ` +
      `nothing reached this command about the batch for ${waited} (--stall-timeout), ${notFinalIds.length} of ${c.approved} action(s) not final. ` +
      (result.recorded
        ? "The approvals are recorded and apply once it runs again: "
        : "It may have recorded the approval before it went: ") +
      `start it again (\`gatehouse dev\`), then check with \`gatehouse actions ${x.workspaceId} --state approved\``
    );
  }
  if (!result.recorded) {
    return (
      `gatehouse: the approval service neither answered the approval nor reported a change to the batch for ${waited} (--stall-timeout); ` +
      `it may still record it — check with \`gatehouse actions ${x.workspaceId} --state approved\` and \`--pending\``
    );
  }
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
  return (
    `gatehouse: nothing happened to the batch for ${waited} (--stall-timeout): ${notFinalIds.length} of ${c.approved} action(s) are not final: ${stuck}. ` +
    `The approval service answers; the approvals are recorded and apply when a worker runs — follow them with \`gatehouse actions ${x.workspaceId} --state approved\` (and --state applying), or wait longer with --stall-timeout 10m`
  );
}
