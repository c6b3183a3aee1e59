// @ts-check
/**
 * Agents: each VU is an agent with one MCP session per workspace on the gateway's /mcp, running
 * snippets that read (an observation) and write (a pending action) through execute_code. Nobody
 * approves here, so the workspaces' queues grow during the run, as when people are away.
 *
 * PROFILE=smoke: AGENT_VUS (4) agents back to back for DURATION (20s).
 * PROFILE=load: AGENT_RATE (4) snippets per second for DURATION (2m), open model.
 * PROFILE=knee: the rate stepped through KNEE_RATES (2,4,6,8,10,12,16 snippets/s), each held KNEE_HOLD
 * seconds (20), after a 10 s warm-up at the first rate.
 * Env: GATEHOUSE_URL, GATEHOUSE_AGENT_TOKEN, GATEHOUSE_APPROVER_TOKEN, AGENT_WORKSPACES (4),
 * AGENT_WRITES (writes per snippet, 1), SLO_FACTOR (lib/slo.js).
 */
import { sleep } from "k6";
import { runReadWrite, warmUp } from "./lib/agent.js";
import { DURATION, envInt, envNumbers, PROFILE } from "./lib/config.js";
import { below, SLO } from "./lib/slo.js";
import { steps } from "./lib/stages.js";
import { createWorkspaces } from "./lib/workspaces.js";

const WORKSPACES = envInt("AGENT_WORKSPACES", 4);
const WRITES = envInt("AGENT_WRITES", 1);
const MAX_VUS = envInt("AGENT_MAX_VUS", 64);

/** @type {Record<string, import("k6/options").Scenario>} */
const shapes = {
  smoke: { executor: "constant-vus", vus: envInt("AGENT_VUS", 4), duration: DURATION, gracefulStop: "30s" },
  load: {
    executor: "constant-arrival-rate",
    rate: envInt("AGENT_RATE", 4),
    timeUnit: "1s",
    duration: DURATION,
    preAllocatedVUs: 8,
    maxVUs: MAX_VUS,
  },
  knee: {
    executor: "ramping-arrival-rate",
    startRate: envNumbers("KNEE_RATES", [2, 4, 6, 8, 10, 12, 16])[0] ?? 1,
    timeUnit: "1s",
    preAllocatedVUs: Math.min(32, MAX_VUS),
    maxVUs: MAX_VUS,
    stages: steps(envNumbers("KNEE_RATES", [2, 4, 6, 8, 10, 12, 16]), envInt("KNEE_HOLD", 20)),
  },
};

/** @type {import("k6/options").Options} */
export const options = {
  setupTimeout: "5m",
  scenarios: { agents: /** @type {import("k6/options").Scenario} */ (shapes[PROFILE]) },
  thresholds: {
    execute_code_duration: [below("p(99)", SLO.executeCodeP99)],
    execute_code_ok: ["rate>0.99"],
    checks: ["rate>0.99"],
  },
};

/**
 * Creates the agents' workspaces (the approver's and agent's public routes) and runs one snippet in
 * each, so the measured snippets run on warm sandboxes (the SLO's condition).
 */
export function setup() {
  const workspaces = createWorkspaces("agents", WORKSPACES);
  for (const ws of workspaces) warmUp(ws);
  return { workspaces };
}

/** One snippet in this VU's workspace; a short pause between snippets in the closed smoke profile. */
export default function (/** @type {ReturnType<typeof setup>} */ data) {
  const ws = data.workspaces[(__VU - 1) % data.workspaces.length];
  if (!ws) throw new Error("setup made no workspaces");
  runReadWrite(ws, WRITES);
  if (PROFILE === "smoke") sleep(0.5);
}
