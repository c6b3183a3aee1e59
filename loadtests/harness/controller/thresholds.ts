/**
 * `options.thresholds` with k6's meaning: each key is a metric (or submetric `name{tag:value}`), each
 * value a list of expressions `aggregation operator number` — aggregation one of count, rate, value,
 * avg, min, max, med, p(N), as the metric's type allows; operator one of < <= > >= == === != — or objects
 * `{threshold: "..."}`. Every threshold is evaluated once, at the end of the run, over all its samples
 * (an empty Trend reads 0, an empty Rate NaN, which fails any comparison, as in k6). `abortOnFail` and
 * `delayAbortEval` are not implemented and are refused.
 */
import { HarnessConfigError } from "./errors.ts";
import { AGGREGATIONS, parseSelector, type Registry, type Selector } from "./metrics.ts";

/** One parsed expression, e.g. p(99)<1000. */
export interface Expression {
  source: string;
  method: string;
  /** For p(N): N (0–100). */
  pct?: number;
  op: string;
  value: number;
}

/** The result of one threshold at the end of the run. */
export interface ThresholdResult {
  metric: string;
  source: string;
  ok: boolean;
  /** The aggregation's value (NaN when the metric had no samples and the aggregation has no value). */
  actual: number;
  /** The aggregation's name as k6 prints it, e.g. "p(99)". */
  stat: string;
}

const OPERATORS = ["<=", "<", ">=", ">", "===", "==", "!="] as const;

/** Parses one expression. @throws HarnessConfigError naming the expression and what is wrong. */
export function parseExpression(source: string): Expression {
  let op: string | undefined;
  let at = -1;
  for (const candidate of OPERATORS) {
    at = source.indexOf(candidate);
    if (at >= 0) {
      op = candidate;
      break;
    }
  }
  if (op === undefined)
    throw new HarnessConfigError(
      `threshold "${source}" has no operator: write aggregation operator number, e.g. "p(95)<500" (operators ${OPERATORS.join(" ")})`,
    );
  const left = source.slice(0, at).trim();
  const right = source.slice(at + op.length).trim();
  if (!/^\d+(\.\d+)?$/.test(right))
    throw new HarnessConfigError(
      `threshold "${source}": the right-hand side must be a number, got "${right}"`,
    );
  const p = /^p\((\d+(\.\d+)?)\)$/.exec(left);
  if (p) {
    const pct = Number(p[1]);
    if (pct > 100) throw new HarnessConfigError(`threshold "${source}": a percentile is at most p(100)`);
    return { source, method: "p", pct, op, value: Number(right) };
  }
  if (!["count", "rate", "value", "avg", "min", "max", "med"].includes(left))
    throw new HarnessConfigError(
      `threshold "${source}": unknown aggregation "${left}"; use count, rate, value, avg, min, max, med or p(N)`,
    );
  return { source, method: left, op, value: Number(right) };
}

/** Applies `op`. */
function compare(a: number, op: string, b: number): boolean {
  switch (op) {
    case "<":
      return a < b;
    case "<=":
      return a <= b;
    case ">":
      return a > b;
    case ">=":
      return a >= b;
    case "==":
    case "===":
      return a === b;
    default:
      return a !== b;
  }
}

/** A metric's thresholds, parsed and checked against its type. */
export interface MetricThresholds {
  selector: Selector;
  expressions: Expression[];
}

/**
 * Parses `options.thresholds` and checks each against the registry (the metric exists; its type
 * supports the aggregation). Creates the submetric sinks, so they collect from the first sample.
 * @throws HarnessConfigError naming the metric and expression.
 */
export function parseThresholds(raw: unknown, registry: Registry): MetricThresholds[] {
  if (raw === undefined) return [];
  if (typeof raw !== "object" || raw === null || Array.isArray(raw))
    throw new HarnessConfigError(
      'options.thresholds must be an object: metric name → list of expressions, e.g. {"http_req_duration": ["p(95)<500"]}',
    );
  const out: MetricThresholds[] = [];
  for (const [key, list] of Object.entries(raw)) {
    const selector = parseSelector(key);
    const sink = registry.sinkOf(selector);
    if (!Array.isArray(list))
      throw new HarnessConfigError(
        `options.thresholds["${key}"] must be a list of expressions, e.g. ["p(95)<500"]`,
      );
    const expressions = list.map((item): Expression => {
      let source: unknown = item;
      if (typeof item === "object" && item !== null) {
        const { threshold, ...rest } = item as Record<string, unknown>;
        const extra = Object.keys(rest);
        if (extra.length > 0)
          throw new HarnessConfigError(
            `options.thresholds["${key}"]: ${extra.map((k) => `"${k}"`).join(", ")} ${extra.length > 1 ? "are" : "is"} not implemented by the Gatehouse k6 test harness (thresholds are evaluated once, at the end of the run); give {"threshold": "..."} or the expression alone`,
          );
        source = threshold;
      }
      if (typeof source !== "string")
        throw new HarnessConfigError(
          `options.thresholds["${key}"]: each threshold is an expression string, got ${JSON.stringify(item)}`,
        );
      const expr = parseExpression(source);
      const allowed = AGGREGATIONS[sink.type];
      const name = expr.method === "p" ? "p(N)" : expr.method;
      if (!allowed.includes(name))
        throw new HarnessConfigError(
          `threshold "${source}" on ${key}: a ${sink.type} has no aggregation "${expr.method}"; its aggregations are ${allowed.join(", ")}`,
        );
      return expr;
    });
    out.push({ selector, expressions });
  }
  return out;
}

/** Evaluates every threshold over the samples collected. `runSeconds`: the test's run time. */
export function evaluateThresholds(
  all: MetricThresholds[],
  registry: Registry,
  runSeconds: number,
): ThresholdResult[] {
  const results: ThresholdResult[] = [];
  for (const t of all) {
    const sink = registry.sinkOf(t.selector);
    for (const e of t.expressions) {
      const actual = sink.aggregate(e.method, runSeconds, e.pct) ?? Number.NaN;
      results.push({
        metric: t.selector.key,
        source: e.source,
        ok: compare(actual, e.op, e.value),
        actual,
        stat: e.method === "p" ? `p(${e.pct})` : e.method,
      });
    }
  }
  return results;
}
