// @ts-check
/** Stepped load shapes for the knee profile: hold each level, with a short ramp between levels. */

/**
 * Stages that ramp to each of `levels` in `rampSeconds` and hold it for `holdSeconds`.
 * @param {number[]} levels e.g. iterations per second, or VUs
 * @param {number} holdSeconds
 * @param {number} rampSeconds
 * @returns {{duration: string, target: number}[]}
 */
export function steps(levels, holdSeconds, rampSeconds = 2) {
  return levels.flatMap((target) => [
    { duration: `${rampSeconds}s`, target },
    { duration: `${holdSeconds}s`, target },
  ]);
}
