// @ts-check
/**
 * The service level objectives (docs/slo.md), as k6 threshold expressions. Latency objectives are in
 * milliseconds and multiplied by SLO_FACTOR (default 1): the CI smoke on a busy shared 2-core machine
 * passes SLO_FACTOR=5 (test/smoke.test.ts), which loosens the latency thresholds only; the success-rate thresholds are never
 * loosened. Every threshold is evaluated at the end of the run and fails the run when breached.
 */
import { env } from "./config.js";

export { SLO } from "./objectives.js";

const factorRaw = env("SLO_FACTOR", "1");
/** Multiplier of every latency objective (1 = the SLO itself). */
export const SLO_FACTOR = Number(factorRaw);
if (!Number.isFinite(SLO_FACTOR) || SLO_FACTOR <= 0)
  throw new Error(`SLO_FACTOR must be a positive number, got "${factorRaw}"`);

/**
 * `"<stat><ms>"` with the objective scaled by SLO_FACTOR, e.g. below("p(99)", 1000) → "p(99)<1000".
 * @param {string} stat a k6 trend aggregation, e.g. "p(99)"
 * @param {number} ms the objective
 */
export function below(stat, ms) {
  return `${stat}<${Math.round(ms * SLO_FACTOR)}`;
}
