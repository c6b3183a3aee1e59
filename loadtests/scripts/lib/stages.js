// @ts-check
/** Stepped load shapes for the knee profile: hold each level, with a short ramp between levels. */

/** Seconds of the first level before the measured levels start (caches, connections, JIT warm). */
export const WARMUP_SECONDS = 10;
/** Seconds of the ramp from one level to the next. */
export const RAMP_SECONDS = 2;

/**
 * Stages that hold the first of `levels` for WARMUP_SECONDS, then for each level ramp to it in
 * RAMP_SECONDS and hold it for `holdSeconds` (npm run loadtest reads each hold's samples).
 * @param {number[]} levels e.g. iterations per second, or VUs
 * @param {number} holdSeconds
 * @returns {{duration: string, target: number}[]}
 */
export function steps(levels, holdSeconds) {
  return [
    { duration: `${WARMUP_SECONDS}s`, target: levels[0] ?? 1 },
    ...levels.flatMap((target) => [
      { duration: `${RAMP_SECONDS}s`, target },
      { duration: `${holdSeconds}s`, target },
    ]),
  ];
}
