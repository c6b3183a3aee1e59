// @ts-check
/**
 * Web sessions: each VU is an approver's open browser tab. An iteration loads the page's data (me,
 * workspaces, inbox) and then holds the live stream, GET /api/events, for WEB_HOLD_S seconds, as the
 * page does between visits. Meanwhile an agent scenario writes into the watched workspace, so the
 * gateway fans notices out to every held stream.
 *
 * k6 has no server-sent-event client: the stream is a k6/http request with `timeout` WEB_HOLD_S, and
 * the expected outcome is that request timing out (error_code 1050) — the gateway kept the stream
 * open for the whole hold. A stream the gateway refused, or ended early, fails the `sse_held` check.
 * What cannot be seen this way: the events' contents and their latency (notice → browser is measured
 * by `npm run bench:web` in Chromium; docs/slo.md).
 *
 * PROFILE=smoke: WEB_VUS (20) sessions for DURATION (20s), streams held 5 s; load: WEB_VUS for DURATION (2m);
 * knee: sessions stepped through KNEE_SESSIONS (20,40,80), each held KNEE_HOLD seconds (20), after a 10 s
 * warm-up at the first level.
 */
import { check } from "k6";
import http from "k6/http";
import { Rate, Trend } from "k6/metrics";
import { runReadWrite } from "./lib/agent.js";
import { apiGet } from "./lib/api.js";
import { APPROVER_TOKEN, BASE_URL, DURATION, envInt, envNumbers, PROFILE } from "./lib/config.js";
import { below, SLO } from "./lib/slo.js";
import { RAMP_SECONDS, steps, WARMUP_SECONDS } from "./lib/stages.js";
import { createWorkspaces } from "./lib/workspaces.js";

const HOLD_S = envInt("WEB_HOLD_S", PROFILE === "smoke" ? 5 : 15);
const VUS = envInt("WEB_VUS", 20);
const KNEE = envNumbers("KNEE_SESSIONS", [20, 40, 80]);
const KNEE_HOLD = envInt("KNEE_HOLD", 20);

/** The page's first reads together (me, workspaces, inbox), ms. */
const pageLoad = new Trend("page_load_duration", true);
/** Share of event streams the gateway held open for the whole WEB_HOLD_S. */
const sseHeld = new Rate("sse_held");

/** @type {Record<string, import("k6/options").Scenario>} */
const sessions = {
  smoke: {
    executor: "constant-vus",
    exec: "session",
    vus: VUS,
    duration: DURATION,
    gracefulStop: `${HOLD_S + 30}s`,
  },
  load: {
    executor: "constant-vus",
    exec: "session",
    vus: VUS,
    duration: DURATION,
    gracefulStop: `${HOLD_S + 30}s`,
  },
  knee: {
    executor: "ramping-vus",
    exec: "session",
    startVUs: 1,
    stages: steps(KNEE, KNEE_HOLD),
    gracefulRampDown: `${HOLD_S + 30}s`,
    gracefulStop: `${HOLD_S + 30}s`,
  },
};

/** @type {import("k6/options").Options} */
export const options = {
  setupTimeout: "5m",
  scenarios: {
    sessions: /** @type {import("k6/options").Scenario} */ (sessions[PROFILE]),
    notices: {
      executor: "constant-arrival-rate",
      exec: "agent",
      rate: envInt("WEB_WRITES_PER_S", 2),
      timeUnit: "1s",
      duration:
        PROFILE === "knee" ? `${WARMUP_SECONDS + KNEE.length * (KNEE_HOLD + RAMP_SECONDS)}s` : DURATION,
      preAllocatedVUs: 2,
      maxVUs: 8,
    },
  },
  thresholds: {
    sse_held: ["rate>0.99"],
    page_load_duration: [below("p(95)", SLO.pageLoadP95)],
    "http_req_failed{kind:api}": ["rate<0.01"],
    checks: ["rate>0.99"],
  },
};

/** One workspace the sessions watch and the agent writes into. */
export function setup() {
  return { workspaces: createWorkspaces("web", 1) };
}

/** A browser tab: load the page's data, then hold the event stream. */
export function session() {
  const began = Date.now();
  const reads = [
    apiGet(APPROVER_TOKEN, "/api/me", "me"),
    apiGet(APPROVER_TOKEN, "/api/workspaces", "workspaces"),
    apiGet(APPROVER_TOKEN, "/api/inbox", "inbox"),
  ];
  pageLoad.add(Date.now() - began);
  check(reads, { "page data loaded": (rs) => rs.every((r) => r.status === 200) });
  const stream = http.get(`${BASE_URL}/api/events`, {
    headers: { authorization: `Bearer ${APPROVER_TOKEN}`, accept: "text/event-stream" },
    timeout: `${HOLD_S}s`,
    responseType: "none",
    tags: { name: "events (held)", kind: "stream" },
  });
  const held = stream.error_code === 1050;
  sseHeld.add(held);
  check(stream, { "event stream held open": () => held });
}

/** The agent writing into the watched workspace: each write is a notice on every held stream. */
export function agent(/** @type {ReturnType<typeof setup>} */ data) {
  const ws = data.workspaces[0];
  if (!ws) throw new Error("setup made no workspace");
  runReadWrite(ws, 1);
}
