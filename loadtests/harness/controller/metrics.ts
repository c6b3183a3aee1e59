/**
 * The controller's metric registry and sinks, with k6's meaning: a Counter sums (count, and rate =
 * count per second of the test's run time), a Gauge keeps the last value (and min/max), a Rate the share
 * of non-zero samples, a Trend every value (min, max, avg, med, p(N) by linear interpolation between the
 * nearest ranks, as k6 computes them from its sorted values). Submetrics — `name{tag:value,...}` —
 * take the samples whose tags match every listed tag.
 */
import { HarnessConfigError } from "./errors.ts";

export type MetricType = "counter" | "gauge" | "rate" | "trend";

/** One sample as a VU sends it. `time` is epoch ms. */
export interface Sample {
  metric: string;
  value: number;
  tags: Record<string, string>;
  time: number;
}

/** A metric's declaration. `isTime`: the values are milliseconds (printed as durations). */
export interface MetricDef {
  name: string;
  type: MetricType;
  isTime: boolean;
}

/** k6's built-in metrics this harness emits. */
export const BUILTIN_METRICS: readonly MetricDef[] = [
  { name: "checks", type: "rate", isTime: false },
  { name: "group_duration", type: "trend", isTime: true },
  { name: "http_reqs", type: "counter", isTime: false },
  { name: "http_req_duration", type: "trend", isTime: true },
  { name: "http_req_waiting", type: "trend", isTime: true },
  { name: "http_req_receiving", type: "trend", isTime: true },
  { name: "http_req_failed", type: "rate", isTime: false },
  { name: "iterations", type: "counter", isTime: false },
  { name: "iteration_duration", type: "trend", isTime: true },
  { name: "dropped_iterations", type: "counter", isTime: false },
  { name: "vus", type: "gauge", isTime: false },
  { name: "vus_max", type: "gauge", isTime: false },
];

/** Accumulates one metric's samples. */
export class Sink {
  count = 0;
  sum = 0;
  nonZero = 0;
  min = Number.POSITIVE_INFINITY;
  max = Number.NEGATIVE_INFINITY;
  last = 0;
  private values: number[] = [];
  private sorted = true;

  constructor(readonly type: MetricType) {}

  add(v: number): void {
    this.count++;
    this.sum += v;
    if (v !== 0) this.nonZero++;
    if (v < this.min) this.min = v;
    if (v > this.max) this.max = v;
    this.last = v;
    if (this.type === "trend") {
      this.values.push(v);
      this.sorted = false;
    }
  }

  /** The `pct` (0–100) percentile of a Trend: 0 when empty, linear between nearest ranks. */
  percentile(pct: number): number {
    const n = this.values.length;
    if (n === 0) return 0;
    if (!this.sorted) {
      this.values.sort((a, b) => a - b);
      this.sorted = true;
    }
    const i = (pct / 100) * (n - 1);
    const lo = this.values[Math.floor(i)] as number;
    const hi = this.values[Math.ceil(i)] as number;
    return lo + (hi - lo) * (i - Math.floor(i));
  }

  /**
   * The value of an aggregation (k6's names: count, rate, value, avg, min, max, med, p(N)), or undefined
   * when this metric type has no such aggregation. `runSeconds` is the test's run time (Counter rate).
   */
  aggregate(method: string, runSeconds: number, pct?: number): number | undefined {
    const empty = this.count === 0;
    switch (this.type) {
      case "counter":
        if (method === "count") return this.sum;
        if (method === "rate") return this.sum / runSeconds;
        return undefined;
      case "gauge":
        return method === "value" ? this.last : undefined;
      case "rate":
        // 0/0 is NaN, as in k6: every comparison with it fails, so an empty Rate never passes.
        return method === "rate" ? this.nonZero / this.count : undefined;
      case "trend":
        if (method === "avg") return empty ? 0 : this.sum / this.count;
        if (method === "min") return empty ? 0 : this.min;
        if (method === "max") return empty ? 0 : this.max;
        if (method === "med") return this.percentile(50);
        if (method === "p") return this.percentile(pct ?? Number.NaN);
        return undefined;
    }
  }
}

/** Aggregations each metric type supports (k6's). */
export const AGGREGATIONS: Record<MetricType, readonly string[]> = {
  counter: ["count", "rate"],
  gauge: ["value"],
  rate: ["rate"],
  trend: ["avg", "min", "max", "med", "p(N)"],
};

/** A metric name with an optional tag filter, as thresholds write it: `http_req_duration{name:inbox}`. */
export interface Selector {
  /** The text as written. */
  key: string;
  metric: string;
  tags: Record<string, string>;
}

/** Parses `name` or `name{tag:value,...}`. @throws HarnessConfigError naming the text. */
export function parseSelector(text: string): Selector {
  const m = /^([^{}\s]+)(?:\{(.*)\})?$/.exec(text.trim());
  if (!m) throw new HarnessConfigError(`threshold metric "${text}" is not a metric name or name{tag:value}`);
  const tags: Record<string, string> = {};
  if (m[2] !== undefined) {
    for (const part of m[2].split(",")) {
      const i = part.indexOf(":");
      const k = part.slice(0, i).trim();
      const v = part
        .slice(i + 1)
        .trim()
        .replace(/^"(.*)"$/, "$1");
      if (i < 1 || !k)
        throw new HarnessConfigError(
          `threshold metric "${text}": each tag filter is tag:value, got "${part}"`,
        );
      tags[k] = v;
    }
  }
  return { key: text, metric: m[1] as string, tags };
}

/** Every metric of the run, its sink, and the submetrics thresholds or the summary asked for. */
export class Registry {
  readonly defs = new Map<string, MetricDef>();
  readonly sinks = new Map<string, Sink>();
  private readonly subs = new Map<string, { sel: Selector; sink: Sink }[]>();

  constructor(custom: readonly MetricDef[] = []) {
    for (const d of [...BUILTIN_METRICS, ...custom]) this.define(d);
  }

  /** Declares a metric. @throws HarnessConfigError when the name is known with another type. */
  define(d: MetricDef): void {
    const known = this.defs.get(d.name);
    if (known) {
      if (known.type !== d.type)
        throw new HarnessConfigError(
          `metric "${d.name}" is a ${known.type}; the script declares it as a ${d.type}`,
        );
      return;
    }
    this.defs.set(d.name, d);
    this.sinks.set(d.name, new Sink(d.type));
  }

  /** The sink of `sel` (a submetric's own when it has tags), created on first use. @throws when unknown. */
  sinkOf(sel: Selector): Sink {
    const def = this.defs.get(sel.metric);
    if (!def)
      throw new HarnessConfigError(
        `no metric named "${sel.metric}" (threshold "${sel.key}"): declare it in the script's init context, or use a built-in one: ${BUILTIN_METRICS.map((b) => b.name).join(", ")}`,
      );
    if (Object.keys(sel.tags).length === 0) return this.sinks.get(sel.metric) as Sink;
    const list = this.subs.get(sel.metric) ?? [];
    const found = list.find((s) => s.sel.key === sel.key);
    if (found) return found.sink;
    const sink = new Sink(def.type);
    list.push({ sel, sink });
    this.subs.set(sel.metric, list);
    return sink;
  }

  /** Adds a sample to its metric and to every submetric whose tags it matches. Unknown metrics are ignored. */
  add(s: Sample): void {
    const sink = this.sinks.get(s.metric);
    if (!sink) return;
    sink.add(s.value);
    for (const sub of this.subs.get(s.metric) ?? [])
      if (Object.entries(sub.sel.tags).every(([k, v]) => s.tags[k] === v)) sub.sink.add(s.value);
  }
}
