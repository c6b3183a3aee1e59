/**
 * `gatehouse approve <ws> --all` and `approve <ws> <id> <id>…`: a batch, recorded at once and
 * followed to its end with progress (batch-follow.ts, batch-progress.ts, batch-report.ts), and the
 * `--state` filter of `gatehouse actions` its messages point to.
 */
import {
  type ActionRecord,
  ActionStatus,
  actionStatusFromJSON,
  type DecisionsClient,
} from "@gatehouse/proto";
import { status } from "@grpc/grpc-js";
import { type BatchResult, followBatch } from "../batch-follow.ts";
import { finished, progressView } from "../batch-progress.ts";
import { type ReportContext, reportBatch } from "../batch-report.ts";
import { addresses, call } from "../clients.ts";
import { who } from "./shared.ts";

/** The states `actions --state` takes, lower case. */
export const STATE_NAMES = ["pending", "approved", "applying", "applied", "failed", "rejected"];

/** How long the approval service may take to answer the probe after a stall, ms. */
const PROBE_MS = 5000;

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

/**
 * Approves `actionIds` (or every pending action, `all`) and shows the batch's progress until each
 * action is final, nothing happened to the batch for `stallMs`, or Ctrl-C. Prints a summary (with
 * `json`, a last JSON line `{"done", "stalled", "interrupted", "recorded", counts…, "failedIds",
 * "outcomeUnknownIds", "notFinalIds"}`); with `all` and nothing pending, "nothing pending in <ws>"
 * and exit 0. Exit code 130 on Ctrl-C (the recorded approvals go on applying on the server), 1
 * when any action failed or the batch stalled.
 * `decidedBy` is the person recorded ("user:<id>"; default {@link who}).
 * @throws the approve call's error (e.g. an unknown workspace or action).
 */
export async function approveBatch(
  decisions: DecisionsClient,
  workspaceId: string,
  actionIds: number[],
  all: boolean,
  stallMs: number,
  json: boolean,
  decidedBy: string = who("--by"),
): Promise<void> {
  const expected = all
    ? (await call(decisions, decisions.listActions, { workspaceId, pendingOnly: true })).actions.map(
        (a) => a.id,
      )
    : actionIds;
  const context: ReportContext = { workspaceId, expected, stallMs, json };
  if (!expected.length) {
    if (json) {
      const zero = { approved: 0, applied: 0, failed: 0, outcomeUnknown: 0, rejected: 0, elapsedMs: 0 };
      const ids = { failedIds: [], outcomeUnknownIds: [], notFinalIds: [] };
      process.stdout.write(
        `${JSON.stringify({ done: true, stalled: false, interrupted: false, recorded: true, ...zero, ...ids })}\n`,
      );
    } else process.stdout.write(`nothing pending in ${workspaceId}\n`);
    return;
  }
  const view = progressView(json, process.stdout, expected.length);
  // Ctrl-C stops following (the bar gives the cursor back) and says what is recorded; a second one
  // ends the process at once.
  const interrupt = new AbortController();
  const onSigint = () => interrupt.abort();
  process.once("SIGINT", onSigint);
  let result: BatchResult;
  try {
    result = await followBatch({
      decisions,
      workspaceId,
      actionIds,
      all,
      decidedBy,
      expected,
      stallMs,
      signal: interrupt.signal,
      // Nothing to show for a batch the service found empty (all decided meanwhile).
      onProgress: (c) => (c.approved > 0 || finished(c) > 0 ? view.update(c) : undefined),
    });
  } finally {
    view.stop();
    process.removeListener("SIGINT", onSigint);
  }
  if (result.stalled) {
    const down = await serviceDown(decisions, workspaceId, expected[0] ?? 0);
    if (down) context.serviceDown = { address: addresses().approval, error: down };
  }
  reportBatch(result, context);
}

/**
 * Whether the approval service answers a cheap call (GetAction) within PROBE_MS: undefined when it
 * answers (any answer, an error status included), else its error ("UNAVAILABLE: …").
 */
async function serviceDown(
  decisions: DecisionsClient,
  workspaceId: string,
  actionId: number,
): Promise<string | undefined> {
  try {
    await call(decisions, decisions.getAction, { workspaceId, actionId }, PROBE_MS);
    return undefined;
  } catch (err) {
    const e = err as { code?: number; details?: string };
    if (e.code !== status.UNAVAILABLE && e.code !== status.DEADLINE_EXCEEDED) return undefined;
    return `${e.code === status.UNAVAILABLE ? "UNAVAILABLE" : "DEADLINE_EXCEEDED"}: ${e.details ?? "no answer"}`;
  }
}
