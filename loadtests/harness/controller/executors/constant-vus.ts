/** constant-vus: `vus` VUs loop over iterations for `duration`; running iterations then get `gracefulStop`. */
import type { Scenario } from "../options.ts";
import { type ExecutorContext, loop } from "./context.ts";

export async function constantVus(
  ctx: ExecutorContext<Extract<Scenario, { executor: "constant-vus" }>>,
): Promise<void> {
  const { durationMs, gracefulStopMs } = ctx.scenario;
  await Promise.all(
    ctx.preallocated.map((vu) =>
      loop(
        ctx,
        vu,
        () => ctx.now() < durationMs,
        () => durationMs + gracefulStopMs,
      ),
    ),
  );
}
