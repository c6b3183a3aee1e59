/**
 * The executors' VU and iteration counts and timing, each on real VU threads of the harness (the
 * scripts only sleep and count), and the arrival schedules as pure functions.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { constantStarts, rampingStarts } from "../harness/controller/executors/arrival-rate.ts";
import { vusAt } from "../harness/controller/executors/ramping-vus.ts";
import { type Point, runText } from "./support.ts";

/** A script with one scenario whose iteration records its VU and sleeps `sleepS`. */
const counting = (scenario: object, sleepS: number) => `
import { sleep } from "k6";
import { Counter } from "k6/metrics";
const started = new Counter("started");
export const options = { scenarios: { s: ${JSON.stringify(scenario)} } };
export default function () {
  started.add(1, { vu: String(__VU), iter: String(__ITER) });
  sleep(${sleepS});
}`;

const of = (points: Point[], metric: string) => points.filter((p) => p.metric === metric);
const perVu = (points: Point[]) => {
  const m = new Map<string, number>();
  for (const p of of(points, "started")) m.set(p.tags.vu as string, (m.get(p.tags.vu as string) ?? 0) + 1);
  return m;
};

test("per-vu-iterations runs exactly `iterations` on each of `vus` VUs, __ITER counting from 0", async () => {
  const { result, points } = await runText(
    counting({ executor: "per-vu-iterations", vus: 3, iterations: 4 }, 0.01),
  );
  assert.equal(result.exitCode, 0);
  assert.deepEqual([...perVu(points).entries()].sort(), [
    ["1", 4],
    ["2", 4],
    ["3", 4],
  ]);
  assert.deepEqual(
    of(points, "started")
      .filter((p) => p.tags.vu === "2")
      .map((p) => p.tags.iter),
    ["0", "1", "2", "3"],
  );
  assert.deepEqual(result.summary.iterations, { complete: 12, interrupted: 0 });
});

test("constant-vus loops `vus` VUs for `duration`: about duration/iteration-time iterations each, none started after the end", async () => {
  const { result, points } = await runText(
    counting({ executor: "constant-vus", vus: 2, duration: "1s" }, 0.1),
  );
  const counts = perVu(points);
  assert.deepEqual([...counts.keys()].sort(), ["1", "2"]);
  for (const [vu, n] of counts) assert.ok(n >= 5 && n <= 11, `VU ${vu} ran ${n} iterations of 100 ms in 1 s`);
  const starts = of(points, "started").map((p) => p.time);
  const first = Math.min(...starts);
  assert.ok(Math.max(...starts) - first < 1000, "no iteration starts after the duration");
  assert.equal(result.summary.iterations.interrupted, 0, "the last iterations end within gracefulStop");
});

test("constant-arrival-rate starts iterations every timeUnit/rate whatever their length", async () => {
  const { result, points } = await runText(
    counting(
      { executor: "constant-arrival-rate", rate: 20, timeUnit: "1s", duration: "1s", preAllocatedVUs: 4 },
      0.05,
    ),
  );
  const starts = of(points, "started")
    .map((p) => p.time)
    .sort((a, b) => a - b);
  assert.equal(starts.length, 20);
  const gaps = starts.slice(1).map((t, i) => t - (starts[i] as number));
  const median = [...gaps].sort((a, b) => a - b)[Math.floor(gaps.length / 2)] as number;
  assert.ok(median >= 35 && median <= 65, `median gap ${median} ms, expected about 50 ms`);
  assert.equal(result.summary.registry.sinks.get("dropped_iterations")?.sum ?? 0, 0);
});

test("an arrival-rate iteration with no free VU is dropped and counted, and no more than maxVUs run", async () => {
  const { result, points } = await runText(
    counting(
      { executor: "constant-arrival-rate", rate: 20, duration: "1s", preAllocatedVUs: 1, maxVUs: 1 },
      0.3,
    ),
  );
  const ran = of(points, "started").length;
  const dropped = result.summary.registry.sinks.get("dropped_iterations")?.sum ?? 0;
  assert.ok(ran >= 3 && ran <= 5, `${ran} iterations of 300 ms fit in 1 s on one VU`);
  assert.equal(ran + dropped, 20, "every scheduled start either ran or was dropped");
  assert.deepEqual([...perVu(points).keys()], ["1"]);
});

test("ramping-vus follows its stages: never more VUs than the target, and fewer once it ramps down", async () => {
  const { points } = await runText(
    counting(
      {
        executor: "ramping-vus",
        startVUs: 0,
        stages: [
          { duration: "1s", target: 4 },
          { duration: "1s", target: 4 },
          { duration: "1s", target: 1 },
        ],
        gracefulRampDown: "0s",
      },
      0.1,
    ),
  );
  const started = of(points, "started");
  const t0 = Math.min(...started.map((p) => p.time));
  const vusIn = (from: number, to: number) =>
    new Set(started.filter((p) => p.time - t0 >= from && p.time - t0 < to).map((p) => p.tags.vu)).size;
  assert.ok(Math.max(...started.map((p) => Number(p.tags.vu))) <= 4, "VU ids stay within the largest target");
  assert.equal(vusIn(1100, 1900), 4, "all four loop while the target holds at 4");
  assert.ok(vusIn(2700, 3000) <= 2, "at most two still start iterations near the end of the ramp down to 1");
});

test("an iteration still running when gracefulStop ends is interrupted: its sleep ends at once and it is not counted", async () => {
  const began = Date.now();
  const { result, points } = await runText(
    counting({ executor: "constant-vus", vus: 1, duration: "500ms", gracefulStop: "300ms" }, 30),
  );
  assert.ok(Date.now() - began < 15_000, "the 30 s sleep did not run to its end");
  assert.deepEqual(result.summary.iterations, { complete: 0, interrupted: 1 });
  assert.equal(of(points, "iterations").length, 0);
});

test("an iteration whose JavaScript never yields is ended when gracefulStop ends: its thread is terminated, the run finishes", async () => {
  const began = Date.now();
  const { result } = await runText(`
export const options = { scenarios: { s: { executor: "constant-vus", vus: 1, duration: "300ms", gracefulStop: "200ms" } } };
export default function () { for (;;) {} }`);
  assert.ok(Date.now() - began < 30_000, "the busy loop did not hang the run");
  assert.deepEqual(result.summary.iterations, { complete: 0, interrupted: 1 });
});

test("ramping-vus' VU count crosses each whole number along the line of its stage", () => {
  const stages = [
    { durationMs: 1000, target: 4 },
    { durationMs: 1000, target: 0 },
  ];
  assert.equal(vusAt(0, stages, 0), 0);
  assert.equal(vusAt(0, stages, 249), 0);
  assert.equal(vusAt(0, stages, 250), 1);
  assert.equal(vusAt(0, stages, 999), 3);
  assert.equal(vusAt(0, stages, 1000), 4);
  assert.equal(vusAt(0, stages, 1250), 3);
  assert.equal(vusAt(0, stages, 5000), 0);
});

test("arrival schedules: constant every timeUnit/rate; ramping follows the integral of the rate", () => {
  assert.deepEqual([...constantStarts(4, 1000, 1000)], [0, 250, 500, 750]);
  // 0 → 10/s over 2 s: 10 iterations, the k-th when t²·10/4 = k, i.e. t = √(0.4·k) s.
  const ramp = [...rampingStarts(0, 1000, [{ durationMs: 2000, target: 10 }])];
  assert.equal(ramp.length, 10);
  for (const [k, t] of ramp.entries())
    assert.ok(Math.abs(t - Math.sqrt(0.4 * k) * 1000) < 1e-6, `start ${k} at ${t}`);
  // Held at 5/s for 1 s: 5 starts, 200 ms apart.
  const step = [...rampingStarts(5, 1000, [{ durationMs: 1000, target: 5 }])];
  assert.deepEqual(step.map(Math.round), [0, 200, 400, 600, 800]);
});
