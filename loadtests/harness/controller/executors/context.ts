/** What an executor drives: the scenario's clock, its VUs, and one iteration at a time on a VU. */
import type { Scenario } from "../options.ts";
import type { VuHost } from "../vu-host.ts";

export interface ExecutorContext<S extends Scenario = Scenario> {
  scenario: S;
  /** ms since the scenario started. */
  now(): number;
  /** Resolves at `ms` since the scenario started (at once when past), or when the run is aborted. */
  sleepUntil(ms: number): Promise<void>;
  /** True once the whole run is being stopped (a fatal error): executors start nothing more. */
  aborted(): boolean;
  /** The scenario's VUs that were initialized before the start (initialVUs of options.ts), idle. */
  preallocated: VuHost[];
  /** Initializes one more VU for this scenario (arrival-rate executors, up to maxVUs). */
  newVu(): Promise<VuHost>;
  /**
   * Runs one iteration of the scenario's function on `vu`; interrupts it at `hardStopMs` (scenario
   * time) when still running. Resolves when it ended, either way.
   */
  iterate(vu: VuHost, hardStopMs: number): Promise<void>;
  /** Counts an iteration an arrival-rate executor could not start for want of a free VU. */
  dropped(): void;
  /** Reports how many VUs are active (running or looping) now, for the `vus` metric. */
  active(delta: number): void;
}

/** Loops `vu` over iterations while `keepGoing()` holds, each interrupted at `hardStop()`. */
export async function loop(
  ctx: ExecutorContext,
  vu: VuHost,
  keepGoing: () => boolean,
  hardStop: () => number,
): Promise<void> {
  ctx.active(1);
  try {
    while (keepGoing() && !ctx.aborted()) await ctx.iterate(vu, hardStop());
  } finally {
    ctx.active(-1);
  }
}
