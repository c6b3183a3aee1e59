// @ts-check
/**
 * `k6/metrics` for the test harness: Counter, Gauge, Rate, Trend. Declared in the init context (as
 * k6 requires); `add(value, tags)` records a sample with the VU's tags plus `tags`.
 */
import { emit, vu } from "../runtime.js";
import { strictModule } from "../unsupported.js";

/** k6's rule for metric names. */
const NAME = /^[a-zA-Z_][a-zA-Z0-9_]{0,127}$/;

class Metric {
  /**
   * @param {"counter" | "gauge" | "rate" | "trend"} type
   * @param {string} name
   * @param {boolean} isTime
   */
  constructor(type, name, isTime) {
    if (vu.phase !== "init")
      throw new Error(
        `new ${type} metric "${name}": k6 declares metrics only in the init context (the script's top level)`,
      );
    if (typeof name !== "string" || !NAME.test(name))
      throw new Error(
        `metric name "${String(name)}" is not valid: letters, digits and _ (not first), at most 128 characters`,
      );
    const known = vu.metrics.get(name);
    if (known && (known.type !== type || known.isTime !== isTime))
      throw new Error(
        `metric "${name}" is already declared as a ${known.type}${known.isTime ? " (time)" : ""}`,
      );
    vu.metrics.set(name, { name, type, isTime });
    this.name = name;
    this.type = type;
  }

  /**
   * @param {number | boolean} value
   * @param {Record<string, string>} [tags]
   * @returns {boolean}
   */
  add(value, tags) {
    if (vu.phase === "init")
      throw new Error(`${this.name}.add: metrics take samples only outside the init context`);
    const n = typeof value === "boolean" ? Number(value) : value;
    if (typeof n !== "number" || Number.isNaN(n))
      throw new TypeError(
        `${this.name}.add takes a number${this.type === "rate" ? " or boolean" : ""}, got ${String(value)}`,
      );
    emit(this.name, this.type === "rate" ? (n !== 0 ? 1 : 0) : n, tags);
    return true;
  }
}

export class Counter extends Metric {
  /** @param {string} name @param {boolean} [isTime] */
  constructor(name, isTime = false) {
    super("counter", name, Boolean(isTime));
  }
}
export class Gauge extends Metric {
  /** @param {string} name @param {boolean} [isTime] */
  constructor(name, isTime = false) {
    super("gauge", name, Boolean(isTime));
  }
}
export class Rate extends Metric {
  /** @param {string} name @param {boolean} [isTime] */
  constructor(name, isTime = false) {
    super("rate", name, Boolean(isTime));
  }
}
export class Trend extends Metric {
  /** @param {string} name @param {boolean} [isTime] */
  constructor(name, isTime = false) {
    super("trend", name, Boolean(isTime));
  }
}

export default strictModule("k6/metrics", { Counter, Gauge, Rate, Trend });
