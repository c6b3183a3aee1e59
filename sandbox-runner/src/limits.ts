import type { Limits } from "@gatehouse/proto";
import { InvalidArgumentError } from "./errors.ts";
import type { EffectiveLimits } from "./protocol.ts";

/** Defaults applied when a limit is 0 / absent (values from sandbox.proto). */
export const DEFAULT_LIMITS: EffectiveLimits = { wallTimeMs: 10_000, heapMb: 128, outputBytes: 65_536 };

/** Upper bounds a caller may request; larger values are refused, never silently clamped. */
export const MAX_LIMITS: EffectiveLimits = { wallTimeMs: 300_000, heapMb: 2_048, outputBytes: 4_194_304 };

/** Smallest heap isolated-vm accepts (MiB). */
export const MIN_HEAP_MB = 8;

/**
 * Fills defaults into the proto `Limits` and checks bounds.
 * @throws InvalidArgumentError naming `limits.<field>` when a value is above its maximum or the heap below 8 MiB.
 */
export function effectiveLimits(limits: Limits | undefined): EffectiveLimits {
  const out: EffectiveLimits = {
    wallTimeMs: limits?.wallTimeMs || DEFAULT_LIMITS.wallTimeMs,
    heapMb: limits?.heapMb || DEFAULT_LIMITS.heapMb,
    outputBytes: limits?.outputBytes || DEFAULT_LIMITS.outputBytes,
  };
  const fields: Array<[keyof EffectiveLimits, string]> = [
    ["wallTimeMs", "wall_time_ms"],
    ["heapMb", "heap_mb"],
    ["outputBytes", "output_bytes"],
  ];
  for (const [key, protoName] of fields) {
    if (out[key] > MAX_LIMITS[key]) {
      throw new InvalidArgumentError(
        `limits.${protoName} is ${out[key]}, above the maximum ${MAX_LIMITS[key]}; send at most ${MAX_LIMITS[key]} (or 0 for the default ${DEFAULT_LIMITS[key]})`,
      );
    }
  }
  if (out.heapMb < MIN_HEAP_MB) {
    throw new InvalidArgumentError(
      `limits.heap_mb is ${out.heapMb}, below the minimum ${MIN_HEAP_MB}; send at least ${MIN_HEAP_MB} (or 0 for the default)`,
    );
  }
  return out;
}
