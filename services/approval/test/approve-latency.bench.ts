/**
 * `npm run bench` (services/approval): approve→applied latency through the approval service, the
 * real Temporal dev server and the real worker process, against the RecordingGatekeeper (a FAKE
 * gatekeeper that answers at once, so the figure is the lifecycle's own cost). Baseline measured
 * in the same run: a bare GetAction round trip to the same service. Env BENCH_APPROVALS (default 100).
 */
import { performance } from "node:perf_hooks";
import { ActionStatus, type DecisionResponse, type SubmitActionResponse } from "@gatehouse/proto";
import { call, description, startHarness, startStack } from "./harness.ts";

const N = Number(process.env.BENCH_APPROVALS ?? 100);

function pct(samples: number[], q: number): number {
  const s = [...samples].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? Number.NaN;
}

const stack = await startStack();
const h = await startHarness(stack);
try {
  const ids: number[] = [];
  for (let i = 0; i < N + 5; i++) {
    const r = await call<unknown, SubmitActionResponse>(h.queue, "submitAction", {
      callerToken: h.token("MEM"),
      localId: `a${i}`,
      description: description(),
      payloadJson: "{}",
    });
    ids.push(r.actionId);
  }
  const approve: number[] = [];
  const baseline: number[] = [];
  for (const [i, id] of ids.entries()) {
    let began = performance.now();
    await call(h.decisions, "getAction", { workspaceId: h.ws, actionId: id });
    const base = performance.now() - began;
    began = performance.now();
    const res = await call<unknown, DecisionResponse>(h.decisions, "approve", {
      workspaceId: h.ws,
      actionId: id,
      decidedBy: "user:bench",
    });
    const ms = performance.now() - began;
    if (res.actions.find((a) => a.id === id)?.status !== ActionStatus.ACTION_STATUS_APPLIED) {
      throw new Error(`action ${id} was not applied`);
    }
    if (i >= 5) {
      approve.push(ms); // the first 5 warm up
      baseline.push(base);
    }
  }
  const row = (name: string, s: number[]) =>
    `${name.padEnd(34)} p50 ${pct(s, 0.5).toFixed(1).padStart(7)} ms   p99 ${pct(s, 0.99).toFixed(1).padStart(7)} ms`;
  console.log(`approve→applied over Temporal, n=${approve.length}`);
  console.log(row("Decisions.Approve (→ APPLIED)", approve));
  console.log(row("baseline: Decisions.GetAction", baseline));
} finally {
  await h.close();
  await stack.close();
}
