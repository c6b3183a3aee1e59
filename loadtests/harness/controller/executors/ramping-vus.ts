/**
 * ramping-vus: the number of looping VUs follows `stages` linearly from `startVUs` (a VU is added or
 * removed each time the line crosses a whole number). A removed VU finishes its iteration within
 * `gracefulRampDown`; at the end, running iterations get `gracefulStop`.
 */
import type { Scenario, Stage } from "../options.ts";
import { type ExecutorContext, loop } from "./context.ts";

/** VUs wanted at `t` ms after the start. */
export function vusAt(startVUs: number, stages: readonly Stage[], t: number): number {
  let from = startVUs;
  let at = 0;
  for (const s of stages) {
    if (t < at + s.durationMs) {
      const f = (t - at) / s.durationMs;
      return s.target >= from
        ? from + Math.floor((s.target - from) * f)
        : from - Math.floor((from - s.target) * f);
    }
    from = s.target;
    at += s.durationMs;
  }
  return from;
}

/** The next time after `t` (ms) at which vusAt changes, or the end of the stages. */
function nextChange(startVUs: number, stages: readonly Stage[], t: number, end: number): number {
  const now = vusAt(startVUs, stages, t);
  // Coarse step then refine: stage changes are at most every few ms apart only with huge targets.
  for (let x = t + 10; x < end; x += 10) if (vusAt(startVUs, stages, x) !== now) return x;
  return end;
}

export async function rampingVus(
  ctx: ExecutorContext<Extract<Scenario, { executor: "ramping-vus" }>>,
): Promise<void> {
  const { startVUs, stages, gracefulRampDownMs, gracefulStopMs } = ctx.scenario;
  const end = stages.reduce((sum, s) => sum + s.durationMs, 0);
  const slot = async (i: number, vu: (typeof ctx.preallocated)[number]) => {
    for (;;) {
      const t = ctx.now();
      if (t >= end || ctx.aborted()) return;
      if (vusAt(startVUs, stages, t) > i) {
        await loop(
          ctx,
          vu,
          () => ctx.now() < end && vusAt(startVUs, stages, ctx.now()) > i,
          () => {
            // Removed before the end: it may finish within gracefulRampDown of the moment it is removed.
            const now = ctx.now();
            const removedAt = Math.min(end, nextDrop(i, now));
            return removedAt < end ? removedAt + gracefulRampDownMs : end + gracefulStopMs;
          },
        );
      } else {
        await ctx.sleepUntil(nextChange(startVUs, stages, t, end));
      }
    }
  };
  const nextDrop = (i: number, from: number) => {
    for (let x = from; x < end; x += 10) if (vusAt(startVUs, stages, x) <= i) return x;
    return end;
  };
  await Promise.all(ctx.preallocated.map((vu, i) => slot(i, vu)));
}
