/**
 * `npm run bench:worker` (bench/worker-lifecycle.ts): approve→applied latency (one approval appended, its binding
 * run woken, the outcome read from the stream; p50/p99) and the wall time to approve 1,000 pending
 * actions in one append and have them applied by the binding's runs, on a real Temporal dev server
 * with the SQLite store and an in-process RecordingGatekeeper. Baseline printed next to it: the same store
 * append path without Temporal (decide+append of Approve, Claim, Applied per action).
 */
import { decide } from "@gatehouse/approval-core";
import { approve, type Engine, outcome, uniqueId } from "@gatehouse/worker/test/support/driver";
import { startFixture } from "@gatehouse/worker/test/support/fixture";
import { seedWorkspace, submit } from "@gatehouse/worker/test/support/workspace";

const LATENCY_N = Number(process.env.BENCH_LATENCY_N ?? 200);
const BATCH_N = Number(process.env.BENCH_BATCH_N ?? 1000);
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? 0;

const f = await startFixture();
const e: Engine = { client: f.env.client, streams: f.streams };
try {
  const ws = uniqueId("bench");
  await seedWorkspace(f.store, ws);
  // Baseline: the stream appends alone (what every engine must do), no Temporal.
  const base: number[] = [];
  for (let i = 0; i < LATENCY_N; i++) {
    const id = await submit(f.streams, ws, `base${i}`);
    const t = performance.now();
    await f.streams.execute(ws, (s) =>
      decide({ type: "Approve", actionIds: [id], decidedBy: "user:alice", includeDependencies: false }, s),
    );
    await f.streams.execute(ws, (s) => decide({ type: "ClaimApply", actionId: id, claimedBy: "bench" }, s));
    await f.gatekeeper.apply("mcp", {
      workspaceId: ws,
      binding: "MEM",
      url: "",
      trust: "",
      actionId: id,
      localId: "",
      payloadJson: "{}",
      dependencyResults: {},
    });
    await f.streams.execute(ws, (s) => decide({ type: "RecordApplied", actionId: id, resultJson: "{}" }, s));
    base.push(performance.now() - t);
  }
  const lat: number[] = [];
  for (let i = 0; i < LATENCY_N; i++) {
    const id = await submit(f.streams, ws, `l${i}`);
    const t = performance.now();
    await approve(e, ws, [id]);
    const o = await outcome(e, ws, id);
    lat.push(performance.now() - t);
    if (o.status !== "applied") throw new Error(`action ${id} ended ${o.status}`);
  }
  console.log(
    `approve→applied (append + wake + run, n=${LATENCY_N}): p50 ${pct(lat, 50).toFixed(1)} ms, p99 ${pct(lat, 99).toFixed(1)} ms | baseline stream appends only: p50 ${pct(base, 50).toFixed(1)} ms, p99 ${pct(base, 99).toFixed(1)} ms`,
  );

  const ws2 = uniqueId("batch");
  await seedWorkspace(f.store, ws2);
  const ids: number[] = [];
  for (let i = 0; i < BATCH_N; i++) ids.push(await submit(f.streams, ws2, `b${i}`));
  const t0 = performance.now();
  await approve(e, ws2, ids);
  const t1 = performance.now();
  const outcomes = [];
  for (const id of ids) outcomes.push(await outcome(e, ws2, id, 600_000));
  const t2 = performance.now();
  const applied = outcomes.filter((o) => o.status === "applied").length;
  console.log(
    `batch of ${BATCH_N}: approvals recorded in ${((t1 - t0) / 1000).toFixed(2)} s (one append); all applied in ${((t2 - t0) / 1000).toFixed(2)} s (${applied} applied, ${f.gatekeeper.runs.length} ApplyActions runs in all)`,
  );
} finally {
  await f.close();
}
