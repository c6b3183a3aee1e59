/**
 * `gatehouse approve <ws> --all`, `approve <ws> <id> <id>…` and `approve <ws> <id>`: the approvals
 * recorded at once and followed to their end with progress (batch-follow.ts, batch-progress.ts,
 * batch-report.ts), and the `--state` filter of `gatehouse actions` its messages point to.
 */
import {
  ActionRecord,
  type ActionStatus,
  actionStatusFromJSON,
  type DecisionsClient,
} from "@gatehouse/proto";
import { status } from "@grpc/grpc-js";
import { type BatchResult, followBatch } from "../batch-follow.ts";
import { finished, progressView } from "../batch-progress.ts";
import { type ReportContext, reportApproved, reportBatch } from "../batch-report.ts";
import { addresses, call } from "../clients.ts";
import { actionsTable, emit } from "../output.ts";
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

/**
 * Approves `actionIds` (or every pending action, `all`) and shows the batch's progress until each
 * action is final, nothing happened to the batch for `stallMs`, or Ctrl-C. Prints a summary (with
 * `json`, a last JSON line `{"done", "stalled", "interrupted", "recorded", counts…, "failedIds",
 * "outcomeUnknownIds", "notFinalIds"}`); with `all` and nothing pending, "nothing pending in <ws>"
 * and exit 0. Exit code 130 on Ctrl-C (the recorded approvals go on applying on the server), 1
 * when any action failed or the batch stalled.
 * `decidedBy` is the person recorded ("user:<id>"; default {@link who}).
 *
 * With `single` (`approve <ws> <id>`, one id, `includeDependencies` for --with-deps): the same
 * follow and exit codes, but the progress goes to stderr (a bar on a terminal, a line every 5 s
 * otherwise) and stdout gets what the one-id form always printed, now final: the records of the
 * action, its approved dependencies and any cascade (a table, or with `json` a JSON array of
 * ActionRecords) — see reportApproved.
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
  single?: { includeDependencies: boolean },
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
  const view = single
    ? progressView(false, process.stderr, expected.length)
    : progressView(json, process.stdout, expected.length);
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
      includeDependencies: single?.includeDependencies ?? false,
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
  if (single) reportApproved(result, context);
  else reportBatch(result, context);
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

/**
 * `gatehouse approve … --no-wait`: records the approvals (ApproveBatch, or Approve with
 * include_dependencies for `--with-deps`, both `return_once_recorded`) and returns without following
 * the applies. Prints the recorded records (APPROVED; a table, or with `json` a JSON array of
 * ActionRecords) and, on stderr, how to follow them; exit 0. With `all` and nothing pending,
 * "nothing pending in <ws>" (`[]` with `json`).
 * @throws the approve call's error (nothing recorded then).
 */
export async function approveNoWait(
  decisions: DecisionsClient,
  workspaceId: string,
  actionIds: number[],
  all: boolean,
  json: boolean,
  decidedBy: string,
  includeDependencies: boolean,
): Promise<void> {
  const res = includeDependencies
    ? await call(decisions, decisions.approve, {
        workspaceId,
        actionId: actionIds[0] ?? 0,
        decidedBy,
        includeDependencies: true,
        returnOnceRecorded: true,
        descriptionDigests: {},
      })
    : await call(decisions, decisions.approveBatch, {
        workspaceId,
        actionIds,
        decidedBy,
        all,
        returnOnceRecorded: true,
        descriptionDigests: {},
      });
  const records = [...res.actions].sort((a, b) => a.id - b.id);
  if (!records.length && !json) {
    process.stdout.write(`nothing pending in ${workspaceId}\n`);
    return;
  }
  emit(
    json,
    records.map((a) => ActionRecord.toJSON(a)),
    () => actionsTable(records),
  );
  if (records.length) {
    process.stderr.write(
      `gatehouse: ${records.length} approval(s) recorded; not waiting for the applies (--no-wait): follow them with \`gatehouse actions ${workspaceId} --state approved --state applying\` (or \`gatehouse show ${workspaceId} <id>\`)\n`,
    );
  }
}
