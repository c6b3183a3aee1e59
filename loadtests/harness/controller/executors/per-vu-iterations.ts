/** per-vu-iterations: each of `vus` VUs runs `iterations` iterations, within `maxDuration` (+ `gracefulStop`). */
import type { Scenario } from "../options.ts";
import { type ExecutorContext, loop } from "./context.ts";

export async function perVuIterations(
  ctx: ExecutorContext<Extract<Scenario, { executor: "per-vu-iterations" }>>,
): Promise<void> {
  const { iterations, maxDurationMs, gracefulStopMs } = ctx.scenario;
  await Promise.all(
    ctx.preallocated.map((vu) => {
      let left = iterations;
      return loop(
        ctx,
        vu,
        () => left-- > 0 && ctx.now() < maxDurationMs,
        () => maxDurationMs + gracefulStopMs,
      );
    }),
  );
}
