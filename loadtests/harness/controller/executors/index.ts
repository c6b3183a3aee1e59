/** The executors this harness implements, by k6's names. */
import { arrivalRate } from "./arrival-rate.ts";
import { constantVus } from "./constant-vus.ts";
import type { ExecutorContext } from "./context.ts";
import { perVuIterations } from "./per-vu-iterations.ts";
import { rampingVus } from "./ramping-vus.ts";

export type { ExecutorContext } from "./context.ts";

/** Runs `ctx.scenario` with its executor; resolves when it ended (graceful stop included). */
export function runExecutor(ctx: ExecutorContext): Promise<void> {
  const s = ctx.scenario;
  switch (s.executor) {
    case "constant-vus":
      return constantVus(ctx as ExecutorContext<typeof s>);
    case "ramping-vus":
      return rampingVus(ctx as ExecutorContext<typeof s>);
    case "per-vu-iterations":
      return perVuIterations(ctx as ExecutorContext<typeof s>);
    case "constant-arrival-rate":
    case "ramping-arrival-rate":
      return arrivalRate(ctx as ExecutorContext<typeof s>);
  }
}
