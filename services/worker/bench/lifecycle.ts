/**
 * `npm run bench -w @gatehouse/worker`: approve→applied latency (sequential update round trips, p50/p99)
 * and the wall time to approve 1,000 pending actions at once, on a real Temporal dev server with the
 * SQLite store and an in-process RecordingGatekeeper. Baseline printed next to it: the same store
 * append path without Temporal (decide+append of Approve, Claim, Applied per action).
 */
import { decide } from "@gatehouse/approval-core";
import { decideUpdate } from "@gatehouse/approval-core/lifecycle-contract";
import { startAction, uniqueId } from "../test/support/driver.ts";
import { startFixture } from "../test/support/fixture.ts";
import { seedWorkspace, submit } from "../test/support/workspace.ts";

const LATENCY_N = Number(process.env.BENCH_LATENCY_N ?? 200);
const BATCH_N = Number(process.env.BENCH_BATCH_N ?? 1000);
const pct = (xs: number[], p: number) =>
  [...xs].sort((a, b) => a - b)[Math.min(xs.length - 1, Math.floor((p / 100) * xs.length))] ?? 0;
const approve = { kind: "approve" as const, decidedBy: "user:alice" };

const f = await startFixture();
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
    const h = await startAction(f.env.client, ws, id);
    const t = performance.now();
    const o = await h.executeUpdate(decideUpdate, { args: [approve] });
    lat.push(performance.now() - t);
    if (o.status !== "applied") throw new Error(`action ${id} ended ${o.status}`);
  }
  console.log(
    `approve→applied (update round trip, n=${LATENCY_N}): p50 ${pct(lat, 50).toFixed(1)} ms, p99 ${pct(lat, 99).toFixed(1)} ms | baseline stream appends only: p50 ${pct(base, 50).toFixed(1)} ms, p99 ${pct(base, 99).toFixed(1)} ms`,
  );

  const ws2 = uniqueId("batch");
  await seedWorkspace(f.store, ws2);
  const ids: number[] = [];
  for (let i = 0; i < BATCH_N; i++) ids.push(await submit(f.streams, ws2, `b${i}`));
  const t0 = performance.now();
  const handles = await Promise.all(ids.map((id) => startAction(f.env.client, ws2, id)));
  const t1 = performance.now();
  const outcomes = await Promise.all(handles.map((h) => h.executeUpdate(decideUpdate, { args: [approve] })));
  const t2 = performance.now();
  const applied = outcomes.filter((o) => o.status === "applied").length;
  console.log(
    `batch of ${BATCH_N}: workflows started in ${((t1 - t0) / 1000).toFixed(2)} s; all approved+applied in ${((t2 - t1) / 1000).toFixed(2)} s (${applied} applied)`,
  );
} finally {
  await f.close();
}
