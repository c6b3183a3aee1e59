// @ts-check
/**
 * Approvers: each VU is a person deciding in their own workspace. An iteration is one round of their
 * work: their agent submits APPROVER_BATCH writes there (execute_code over /mcp, so the inbox holds
 * real pending actions), then the person loads the inbox, opens a few details, approves the batch and
 * watches it apply. One workspace per VU (VU n uses workspace n), so two approvers never race for the
 * same action.
 *
 * PROFILE=smoke: APPROVER_VUS (2) approvers for DURATION (20s).
 * PROFILE=load: APPROVER_VUS approvers for DURATION (2m).
 * PROFILE=knee: the number of approvers stepped through KNEE_APPROVERS (1,2,4,6,8), each held KNEE_HOLD
 * seconds (20), after a 10 s warm-up at the first level.
 * Env: GATEHOUSE_URL, GATEHOUSE_AGENT_TOKEN, GATEHOUSE_APPROVER_TOKEN, APPROVER_BATCH (5),
 * APPROVER_THINK_S (1: the person's pause after each batch), SLO_FACTOR (lib/slo.js).
 */
import { sleep } from "k6";
import { runReadWrite } from "./lib/agent.js";
import { loadInbox, reviewAndApprove } from "./lib/approver.js";
import { DURATION, envInt, envNumbers, PROFILE } from "./lib/config.js";
import { below, SLO } from "./lib/slo.js";
import { steps } from "./lib/stages.js";
import { createWorkspaces } from "./lib/workspaces.js";

const BATCH = envInt("APPROVER_BATCH", 5);
const THINK_S = envInt("APPROVER_THINK_S", 1);
const KNEE = envNumbers("KNEE_APPROVERS", [1, 2, 4, 6, 8]);
const VUS = envInt("APPROVER_VUS", 2);

/** @type {Record<string, import("k6/options").Scenario>} */
const shapes = {
  smoke: { executor: "constant-vus", vus: VUS, duration: DURATION, gracefulStop: "60s" },
  load: { executor: "constant-vus", vus: VUS, duration: DURATION, gracefulStop: "60s" },
  knee: {
    executor: "ramping-vus",
    startVUs: 1,
    stages: steps(KNEE, envInt("KNEE_HOLD", 20)),
    gracefulRampDown: "60s",
    gracefulStop: "60s",
  },
};

/** The most VUs the chosen shape runs at once: one workspace each. */
const maxVUs = PROFILE === "knee" ? Math.max(...KNEE) : VUS;

/** @type {import("k6/options").Options} */
export const options = {
  setupTimeout: "5m",
  scenarios: { approvers: /** @type {import("k6/options").Scenario} */ (shapes[PROFILE]) },
  thresholds: {
    inbox_duration: [below("p(95)", SLO.inboxP95)],
    detail_duration: [below("p(95)", SLO.detailP95)],
    approve_batch_duration: [below("p(95)", SLO.approveBatchP95)],
    approve_to_applied: [below("p(99)", SLO.approveToAppliedP99)],
    batch_applied: ["rate>0.99"],
    execute_code_ok: ["rate>0.99"],
    checks: ["rate>0.99"],
  },
};

/** One workspace per approver. */
export function setup() {
  return { workspaces: createWorkspaces("approvers", maxVUs) };
}

/** Submit a batch as the agent, then review and approve it as the person. */
export default function (/** @type {ReturnType<typeof setup>} */ data) {
  const ws = data.workspaces[(__VU - 1) % data.workspaces.length];
  if (!ws) throw new Error("setup made no workspaces");
  runReadWrite(ws, BATCH);
  const pending = loadInbox(ws.id);
  if (pending.length > 0) reviewAndApprove(ws.id, pending.slice(0, 1000));
  sleep(THINK_S);
}
