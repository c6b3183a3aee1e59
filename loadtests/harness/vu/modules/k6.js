// @ts-check
/**
 * `k6` for the test harness: check, sleep, group, fail — with k6's meaning. check adds one `checks`
 * sample per condition (tag `check`), returns whether all passed; sleep blocks the VU; group runs its
 * function under the group's tag and adds a `group_duration` sample; fail throws, ending the iteration.
 */
import { block, emit, requireRunPhase, vu } from "../runtime.js";
import { strictModule } from "../unsupported.js";

/**
 * @param {unknown} value
 * @param {Record<string, unknown>} sets condition name → function of value (or a value whose truth is used)
 * @param {Record<string, string>} [tags]
 * @returns {boolean}
 */
export function check(value, sets, tags) {
  requireRunPhase("check");
  let all = true;
  for (const [name, cond] of Object.entries(sets)) {
    const ok = Boolean(typeof cond === "function" ? cond(value) : cond);
    emit("checks", ok ? 1 : 0, { ...(tags ?? {}), check: name });
    if (!ok) all = false;
  }
  return all;
}

/**
 * Blocks the VU for `seconds` (fractions allowed).
 * @param {number} seconds
 */
export function sleep(seconds) {
  requireRunPhase("sleep");
  if (typeof seconds !== "number" || !Number.isFinite(seconds) || seconds < 0)
    throw new TypeError(`sleep takes a number of seconds ≥ 0, got ${String(seconds)}`);
  block(seconds * 1000);
}

/**
 * Runs `fn` inside group `name`; returns what fn returns.
 * @template T
 * @param {string} name
 * @param {() => T} fn
 * @returns {T}
 */
export function group(name, fn) {
  requireRunPhase("group");
  if (name.includes("::")) throw new Error(`group names may not contain "::", got "${name}"`);
  const outer = vu.group;
  vu.group = `${outer}::${name}`;
  const began = Date.now();
  try {
    return fn();
  } finally {
    emit("group_duration", Date.now() - began);
    vu.group = outer;
  }
}

/**
 * Ends the iteration with an error (k6's fail).
 * @param {string} [message]
 * @returns {never}
 */
export function fail(message) {
  throw new Error(message ?? "");
}

export default strictModule("k6", { check, sleep, group, fail });
