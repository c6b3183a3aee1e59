// @ts-check
/**
 * What an approver does in the web app, through the same API routes: load the inbox, open the
 * details of the writes waiting in their workspace, approve them in one batch (answered once the
 * approvals are recorded, as the web app asks), then watch them reach "applied" — here by reading the
 * action detail every APPLIED_POLL_MS (the web app re-reads on each live notice; k6 has no SSE client).
 */
import { check, sleep } from "k6";
import { Rate, Trend } from "k6/metrics";
import { apiGet, apiPost } from "./api.js";
import { APPROVER_TOKEN, envInt } from "./config.js";

/** GET /api/inbox, ms. */
export const inboxDuration = new Trend("inbox_duration", true);
/** GET …/actions/:id, ms. */
export const detailDuration = new Trend("detail_duration", true);
/** POST …/approve-batch answered once recorded, ms. */
export const approveBatchDuration = new Trend("approve_batch_duration", true);
/** From sending the batch to seeing its last action applied through the API, ms. */
export const approveToApplied = new Trend("approve_to_applied", true);
/** Share of batches whose every action was seen applied within APPLIED_WAIT_S. */
export const batchApplied = new Rate("batch_applied");

const POLL_MS = envInt("APPLIED_POLL_MS", 100);
const WAIT_S = envInt("APPLIED_WAIT_S", 60);
const DETAILS = envInt("APPROVER_DETAILS", 3);

/**
 * The pending action ids of `workspaceId` in the approver's inbox (whole inbox loaded, as the page does).
 * @param {string} workspaceId
 * @returns {number[]}
 */
export function loadInbox(workspaceId) {
  const res = apiGet(APPROVER_TOKEN, "/api/inbox", "inbox");
  inboxDuration.add(res.timings.duration);
  if (!check(res, { "inbox loaded": (r) => r.status === 200 })) return [];
  /** @type {{workspaces: {id: string, pending: {id: number}[]}[]}} */
  const inbox = /** @type {any} */ (res.json());
  const mine = inbox.workspaces.find((w) => w.id === workspaceId);
  return mine ? mine.pending.map((a) => a.id) : [];
}

/**
 * Opens up to APPROVER_DETAILS of `ids`' details, approves all of `ids` in one batch, and waits until
 * each is applied. Returns whether every one was seen applied.
 * @param {string} workspaceId
 * @param {number[]} ids
 */
export function reviewAndApprove(workspaceId, ids) {
  for (const id of ids.slice(0, DETAILS)) {
    const d = apiGet(APPROVER_TOKEN, `/api/workspaces/${workspaceId}/actions/${id}`, "action detail");
    detailDuration.add(d.timings.duration);
    check(d, { "detail opened": (r) => r.status === 200 });
  }
  const began = Date.now();
  const res = apiPost(
    APPROVER_TOKEN,
    `/api/workspaces/${workspaceId}/approve-batch`,
    { actionIds: ids, returnOnceRecorded: true },
    "approve batch",
  );
  approveBatchDuration.add(res.timings.duration);
  if (!check(res, { "batch recorded": (r) => r.status === 200 })) {
    batchApplied.add(false);
    return false;
  }
  // Applied in submission order: the last id applied means every earlier one was decided before it.
  const last = Math.max(...ids);
  const deadline = began + WAIT_S * 1000;
  let state = "";
  while (Date.now() < deadline) {
    const d = apiGet(APPROVER_TOKEN, `/api/workspaces/${workspaceId}/actions/${last}`, "poll applied");
    state = d.status === 200 ? /** @type {any} */ (d.json()).action.status : `HTTP ${d.status}`;
    if (state === "applied" || state === "failed" || state === "rejected") break;
    sleep(POLL_MS / 1000);
  }
  const applied = state === "applied";
  if (applied) approveToApplied.add(Date.now() - began);
  batchApplied.add(applied);
  check(state, { "batch applied": (s) => s === "applied" });
  return applied;
}
