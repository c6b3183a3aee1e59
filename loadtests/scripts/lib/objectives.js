// @ts-check
/**
 * The service level objectives' figures (docs/slo.md), in milliseconds: plain data with no k6 import,
 * so the scenario scripts (through slo.js) and the full run's report (full-run.ts) read the same numbers.
 */
export const SLO = Object.freeze({
  /** execute_code over /mcp of a snippet with one read and one write, on a warm sandbox: p99. */
  executeCodeP99: 1000,
  /** GET /api/inbox: p95. */
  inboxP95: 500,
  /** GET /api/workspaces/:ws/actions/:id: p95. */
  detailP95: 300,
  /** POST approve-batch answered once the approvals are recorded: p95. */
  approveBatchP95: 500,
  /** Approve → every approved action observed applied through the API: p99. */
  approveToAppliedP99: 2000,
  /** The web app's first reads (me, workspaces, inbox) together: p95. */
  pageLoadP95: 1000,
});
