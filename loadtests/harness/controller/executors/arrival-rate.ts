/**
 * constant-arrival-rate and ramping-arrival-rate: iterations start on a schedule whatever the system's
 * answer times (an open model). Each start takes a free VU; with none free, the iteration is dropped
 * (`dropped_iterations`) and, below `maxVUs`, one more VU is initialized for later starts — as k6 does.
 * At the end, running iterations get `gracefulStop`.
 */
import type { Scenario, Stage } from "../options.ts";
import type { VuHost } from "../vu-host.ts";
import type { ExecutorContext } from "./context.ts";

/**
 * Start times (ms) of ramping-arrival-rate: the rate goes linearly from `startRate` through each
 * stage's target (iterations per `timeUnitMs`); iteration k starts when the integral of the rate reaches k.
 */
export function* rampingStarts(
  startRate: number,
  timeUnitMs: number,
  stages: readonly Stage[],
): Generator<number> {
  let from = startRate / timeUnitMs; // iterations per ms
  let at = 0;
  let done = 0; // iterations started before this stage (fractional)
  let k = 0;
  for (const s of stages) {
    const to = s.target / timeUnitMs;
    const d = s.durationMs;
    // iterations in [0, τ] of this stage: from·τ + (to − from)·τ²/(2d)
    const total = from * d + ((to - from) * d) / 2;
    while (k < done + total - 1e-9) {
      const need = k - done;
      let tau: number;
      const a = (to - from) / (2 * d);
      if (Math.abs(a) < 1e-15) tau = need / from;
      else tau = (-from + Math.sqrt(Math.max(0, from * from + 4 * a * need))) / (2 * a);
      yield at + tau;
      k++;
    }
    done += total;
    from = to;
    at += d;
  }
}

/** Start times of constant-arrival-rate: every timeUnit/rate ms for `durationMs`. */
export function* constantStarts(rate: number, timeUnitMs: number, durationMs: number): Generator<number> {
  const every = timeUnitMs / rate;
  for (let k = 0; k * every < durationMs; k++) yield k * every;
}

export async function arrivalRate(
  ctx: ExecutorContext<Extract<Scenario, { executor: "constant-arrival-rate" | "ramping-arrival-rate" }>>,
): Promise<void> {
  const s = ctx.scenario;
  const end =
    s.executor === "constant-arrival-rate"
      ? s.durationMs
      : s.stages.reduce((sum, st) => sum + st.durationMs, 0);
  const starts =
    s.executor === "constant-arrival-rate"
      ? constantStarts(s.rate, s.timeUnitMs, s.durationMs)
      : rampingStarts(s.startRate, s.timeUnitMs, s.stages);
  const free: VuHost[] = [...ctx.preallocated];
  let allocated = free.length;
  let initializing = 0;
  const running = new Set<Promise<void>>();
  const initializations: Promise<void>[] = [];
  for (const at of starts) {
    if (at >= end || ctx.aborted()) break;
    await ctx.sleepUntil(at);
    if (ctx.aborted()) break;
    const vu = free.pop();
    if (!vu) {
      ctx.dropped();
      if (allocated + initializing < s.maxVUs) {
        initializing++;
        initializations.push(
          ctx.newVu().then(
            (v) => {
              initializing--;
              allocated++;
              free.push(v);
            },
            () => {
              initializing--;
            },
          ),
        );
      }
      continue;
    }
    ctx.active(1);
    const run = ctx.iterate(vu, end + s.gracefulStopMs).finally(() => {
      ctx.active(-1);
      free.push(vu);
      running.delete(run);
    });
    running.add(run);
  }
  await Promise.all([...running]);
  await Promise.all(initializations);
}
