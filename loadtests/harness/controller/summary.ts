/**
 * The end-of-test summary, laid out like k6's: the checks (by group), then every metric that got
 * samples or has thresholds — Trends with the summaryTrendStats (avg, min, med, max, p(90), p(95),
 * p(99) by default), Rates as a percentage with ✓/✗ counts, Counters with their count and rate per
 * second, Gauges with their value — each metric with thresholds marked ✓ or ✗, and each threshold
 * listed under it with the value it was judged on. Also the same as JSON (--summary-export).
 */
import { formatDuration } from "./duration.ts";
import type { MetricDef, Registry, Sink } from "./metrics.ts";
import type { ThresholdResult } from "./thresholds.ts";

/** One check's passes and fails. */
export interface CheckCount {
  group: string;
  name: string;
  passes: number;
  fails: number;
}

/** What the summary shows. */
export interface SummaryInput {
  registry: Registry;
  thresholds: ThresholdResult[];
  checks: CheckCount[];
  runSeconds: number;
  trendStats: string[];
  iterations: { complete: number; interrupted: number };
}

function fmtValue(def: MetricDef | undefined, v: number): string {
  if (!Number.isFinite(v)) return String(v);
  if (def?.isTime)
    return v < 1
      ? `${(v * 1000).toFixed(0)}µs`
      : v < 1000
        ? `${v.toFixed(2)}ms`
        : `${(v / 1000).toFixed(2)}s`;
  return Number.isInteger(v) ? String(v) : v.toFixed(4).replace(/0+$/, "");
}

/** A Trend stat by its summary name ("avg", "p(95)", "count"...). */
function trendStat(sink: Sink, stat: string, runSeconds: number): number {
  if (stat === "count") return sink.count;
  const p = /^p\((.+)\)$/.exec(stat);
  return p ? sink.percentile(Number(p[1])) : (sink.aggregate(stat, runSeconds) ?? Number.NaN);
}

/** The metric's line of values. */
function valuesOf(def: MetricDef, sink: Sink, input: SummaryInput): string {
  switch (def.type) {
    case "trend":
      return input.trendStats
        .map((s) => `${s}=${fmtValue(def, trendStat(sink, s, input.runSeconds))}`)
        .join(" ");
    case "rate": {
      const pct = sink.count ? (100 * sink.nonZero) / sink.count : Number.NaN;
      return `${pct.toFixed(2)}% ✓ ${sink.nonZero} ✗ ${sink.count - sink.nonZero}`;
    }
    case "counter":
      return `${fmtValue(def, sink.sum)} ${(sink.sum / input.runSeconds).toFixed(2)}/s`;
    case "gauge":
      return `${fmtValue(def, sink.last)} min=${fmtValue(def, sink.count ? sink.min : 0)} max=${fmtValue(def, sink.count ? sink.max : 0)}`;
  }
}

/** The summary as text. */
export function summaryText(input: SummaryInput): string {
  const lines: string[] = [];
  let group = "\0";
  for (const c of input.checks) {
    if (c.group !== group) {
      group = c.group;
      if (group) lines.push(`     █ ${group.split("::").filter(Boolean).join(" › ")}`);
    }
    const total = c.passes + c.fails;
    lines.push(`     ${c.fails === 0 ? "✓" : "✗"} ${c.name}`);
    if (c.fails > 0)
      lines.push(`      ↳  ${Math.floor((100 * c.passes) / total)}% — ✓ ${c.passes} / ✗ ${c.fails}`);
  }
  if (input.checks.length) lines.push("");
  const byMetric = new Map<string, ThresholdResult[]>();
  for (const t of input.thresholds) byMetric.set(t.metric, [...(byMetric.get(t.metric) ?? []), t]);
  const rows: { mark: string; name: string; values: string; thresholds: ThresholdResult[] }[] = [];
  const names = new Set<string>(
    [...input.registry.defs.keys()].filter((n) => (input.registry.sinks.get(n)?.count ?? 0) > 0),
  );
  for (const key of byMetric.keys()) names.add(key);
  for (const name of [...names].sort()) {
    const bare = name.replace(/\{.*$/, "");
    const def = input.registry.defs.get(bare);
    if (!def) continue;
    const sink =
      name === bare
        ? input.registry.sinks.get(name)
        : input.registry.sinkOf({ key: name, metric: bare, tags: parseTags(name) });
    if (!sink) continue;
    const ts = byMetric.get(name) ?? [];
    const mark = ts.length === 0 ? " " : ts.every((t) => t.ok) ? "✓" : "✗";
    rows.push({ mark, name, values: valuesOf(def, sink, input), thresholds: ts });
  }
  const width = Math.max(30, ...rows.map((r) => r.name.length + 2));
  for (const r of rows) {
    lines.push(`   ${r.mark} ${r.name}${".".repeat(width - r.name.length)}: ${r.values}`);
    for (const t of r.thresholds)
      lines.push(
        `       ${t.ok ? "✓" : "✗"} '${t.source}' ${t.stat}=${fmtValue(input.registry.defs.get(t.metric.replace(/\{.*$/, "")), t.actual)}`,
      );
  }
  lines.push("");
  lines.push(
    `     run time ${formatDuration(input.runSeconds * 1000)}, ${input.iterations.complete} complete and ${input.iterations.interrupted} interrupted iterations`,
  );
  const failed = input.thresholds.filter((t) => !t.ok);
  lines.push(
    failed.length
      ? `     ✗ ${failed.length} of ${input.thresholds.length} thresholds failed: ${[...new Set(failed.map((t) => t.metric))].join(", ")}`
      : `     ✓ all ${input.thresholds.length} thresholds passed`,
  );
  return lines.join("\n");
}

function parseTags(name: string): Record<string, string> {
  const inner = /\{(.*)\}$/.exec(name)?.[1] ?? "";
  return Object.fromEntries(
    inner
      .split(",")
      .filter(Boolean)
      .map((p) => {
        const i = p.indexOf(":");
        return [
          p.slice(0, i).trim(),
          p
            .slice(i + 1)
            .trim()
            .replace(/^"(.*)"$/, "$1"),
        ];
      }),
  );
}

/** The summary as JSON (the shape of k6's --summary-export, with each threshold's value added). */
export function summaryJson(input: SummaryInput): unknown {
  const metrics: Record<string, unknown> = {};
  for (const [name, def] of input.registry.defs) {
    const sink = input.registry.sinks.get(name) as Sink;
    const ts = input.thresholds.filter((t) => t.metric === name);
    if (sink.count === 0 && ts.length === 0) continue;
    metrics[name] = metricJson(def, sink, input, ts);
  }
  for (const t of input.thresholds) {
    if (metrics[t.metric]) continue;
    const bare = t.metric.replace(/\{.*$/, "");
    const def = input.registry.defs.get(bare) as MetricDef;
    const sink = input.registry.sinkOf({ key: t.metric, metric: bare, tags: parseTags(t.metric) });
    metrics[t.metric] = metricJson(
      def,
      sink,
      input,
      input.thresholds.filter((x) => x.metric === t.metric),
    );
  }
  return {
    state: { testRunDurationMs: input.runSeconds * 1000 },
    iterations: input.iterations,
    checks: input.checks,
    metrics,
  };
}

function metricJson(def: MetricDef, sink: Sink, input: SummaryInput, ts: ThresholdResult[]) {
  const values: Record<string, number> = {};
  if (def.type === "trend")
    for (const s of input.trendStats) values[s] = trendStat(sink, s, input.runSeconds);
  if (def.type === "rate")
    Object.assign(values, {
      rate: sink.nonZero / sink.count,
      passes: sink.nonZero,
      fails: sink.count - sink.nonZero,
    });
  if (def.type === "counter") Object.assign(values, { count: sink.sum, rate: sink.sum / input.runSeconds });
  if (def.type === "gauge") Object.assign(values, { value: sink.last, min: sink.min, max: sink.max });
  values.samples = sink.count;
  return {
    type: def.type,
    contains: def.isTime ? "time" : "default",
    values,
    thresholds: Object.fromEntries(ts.map((t) => [t.source, { ok: t.ok, value: t.actual }])),
  };
}
