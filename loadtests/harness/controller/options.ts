/**
 * The script's `options`, checked against what this test harness implements: `scenarios` (executors
 * constant-vus, ramping-vus, constant-arrival-rate, ramping-arrival-rate, per-vu-iterations), `thresholds`,
 * `setupTimeout`, `teardownTimeout`, `tags`, `summaryTrendStats`. Any other option, executor or executor
 * field is refused with an error naming it (k6 would honour it; silently ignoring it would change the
 * test). A script with no scenarios runs k6's default: one VU, one iteration of the default function.
 */
import { durationMs } from "./duration.ts";
import { HarnessConfigError } from "./errors.ts";

/** Fields every scenario takes. */
interface Common {
  name: string;
  exec: string;
  startTimeMs: number;
  gracefulStopMs: number;
  tags: Record<string, string>;
  env: Record<string, string>;
}

export interface Stage {
  durationMs: number;
  target: number;
}

export type Scenario = Common &
  (
    | { executor: "constant-vus"; vus: number; durationMs: number }
    | { executor: "ramping-vus"; startVUs: number; stages: Stage[]; gracefulRampDownMs: number }
    | {
        executor: "constant-arrival-rate";
        rate: number;
        timeUnitMs: number;
        durationMs: number;
        preAllocatedVUs: number;
        maxVUs: number;
      }
    | {
        executor: "ramping-arrival-rate";
        startRate: number;
        timeUnitMs: number;
        stages: Stage[];
        preAllocatedVUs: number;
        maxVUs: number;
      }
    | { executor: "per-vu-iterations"; vus: number; iterations: number; maxDurationMs: number }
  );

/** The options the harness runs with. */
export interface RunOptions {
  scenarios: Scenario[];
  thresholds: unknown;
  setupTimeoutMs: number;
  teardownTimeoutMs: number;
  tags: Record<string, string>;
  summaryTrendStats: string[];
}

const TOP_LEVEL = new Set([
  "scenarios",
  "thresholds",
  "setupTimeout",
  "teardownTimeout",
  "tags",
  "summaryTrendStats",
]);
const COMMON = ["executor", "exec", "startTime", "gracefulStop", "tags", "env"];
const EXECUTOR_FIELDS: Record<Scenario["executor"], string[]> = {
  "constant-vus": ["vus", "duration"],
  "ramping-vus": ["startVUs", "stages", "gracefulRampDown"],
  "constant-arrival-rate": ["rate", "timeUnit", "duration", "preAllocatedVUs", "maxVUs"],
  "ramping-arrival-rate": ["startRate", "timeUnit", "stages", "preAllocatedVUs", "maxVUs"],
  "per-vu-iterations": ["vus", "iterations", "maxDuration"],
};

/** A whole number ≥ `min`, or `fallback` when absent. @throws HarnessConfigError naming `what`. */
function whole(value: unknown, what: string, fallback: number | undefined, min = 0): number {
  if (value === undefined && fallback !== undefined) return fallback;
  if (typeof value !== "number" || !Number.isInteger(value) || value < min)
    throw new HarnessConfigError(
      `${what} must be a whole number ≥ ${min}${fallback === undefined ? " (required)" : ""}, got ${JSON.stringify(value)}`,
    );
  return value;
}

/** A string map (tags, env). @throws HarnessConfigError naming `what`. */
function strings(value: unknown, what: string): Record<string, string> {
  if (value === undefined) return {};
  if (typeof value !== "object" || value === null || Object.values(value).some((v) => typeof v !== "string"))
    throw new HarnessConfigError(`${what} must be an object of strings`);
  return value as Record<string, string>;
}

function stages(value: unknown, what: string): Stage[] {
  if (!Array.isArray(value) || value.length === 0)
    throw new HarnessConfigError(`${what} must be a non-empty list of {duration, target}`);
  return value.map((s, i) => {
    const extra = Object.keys(s ?? {}).filter((k) => k !== "duration" && k !== "target");
    if (extra.length)
      throw new HarnessConfigError(
        `${what}[${i}].${extra[0]} is not implemented by the Gatehouse k6 test harness`,
      );
    return {
      durationMs: durationMs(s.duration, `${what}[${i}].duration`),
      target: whole(s.target, `${what}[${i}].target`, undefined),
    };
  });
}

/** One scenario's config. @throws HarnessConfigError naming the scenario and field. */
function scenario(name: string, raw: Record<string, unknown>, exported: Set<string>): Scenario {
  const where = `scenarios.${name}`;
  const executor = raw.executor as Scenario["executor"];
  const own = EXECUTOR_FIELDS[executor];
  if (!own)
    throw new HarnessConfigError(
      `${where}.executor "${String(raw.executor)}" is not implemented by the Gatehouse k6 test harness; it implements ${Object.keys(EXECUTOR_FIELDS).join(", ")}`,
    );
  for (const key of Object.keys(raw))
    if (!COMMON.includes(key) && !own.includes(key))
      throw new HarnessConfigError(
        `${where}.${key} is not implemented by the Gatehouse k6 test harness for ${executor} (it implements ${[...COMMON, ...own].join(", ")})`,
      );
  const exec = raw.exec === undefined ? "default" : String(raw.exec);
  if (!exported.has(exec))
    throw new HarnessConfigError(`${where}.exec: the script exports no function "${exec}"`);
  const common: Common = {
    name,
    exec,
    startTimeMs: raw.startTime === undefined ? 0 : durationMs(raw.startTime, `${where}.startTime`),
    gracefulStopMs:
      raw.gracefulStop === undefined ? 30_000 : durationMs(raw.gracefulStop, `${where}.gracefulStop`),
    tags: strings(raw.tags, `${where}.tags`),
    env: strings(raw.env, `${where}.env`),
  };
  const timeUnitMs = () =>
    raw.timeUnit === undefined ? 1000 : durationMs(raw.timeUnit, `${where}.timeUnit`);
  switch (executor) {
    case "constant-vus":
      return {
        ...common,
        executor,
        vus: whole(raw.vus, `${where}.vus`, 1, 1),
        durationMs: durationMs(raw.duration, `${where}.duration`),
      };
    case "ramping-vus":
      return {
        ...common,
        executor,
        startVUs: whole(raw.startVUs, `${where}.startVUs`, 1),
        stages: stages(raw.stages, `${where}.stages`),
        gracefulRampDownMs:
          raw.gracefulRampDown === undefined
            ? 30_000
            : durationMs(raw.gracefulRampDown, `${where}.gracefulRampDown`),
      };
    case "constant-arrival-rate": {
      const pre = whole(raw.preAllocatedVUs, `${where}.preAllocatedVUs`, undefined, 1);
      return {
        ...common,
        executor,
        rate: whole(raw.rate, `${where}.rate`, undefined, 1),
        timeUnitMs: timeUnitMs(),
        durationMs: durationMs(raw.duration, `${where}.duration`),
        preAllocatedVUs: pre,
        maxVUs: Math.max(pre, whole(raw.maxVUs, `${where}.maxVUs`, pre, 1)),
      };
    }
    case "ramping-arrival-rate": {
      const pre = whole(raw.preAllocatedVUs, `${where}.preAllocatedVUs`, undefined, 1);
      return {
        ...common,
        executor,
        startRate: whole(raw.startRate, `${where}.startRate`, 0),
        timeUnitMs: timeUnitMs(),
        stages: stages(raw.stages, `${where}.stages`),
        preAllocatedVUs: pre,
        maxVUs: Math.max(pre, whole(raw.maxVUs, `${where}.maxVUs`, pre, 1)),
      };
    }
    case "per-vu-iterations":
      return {
        ...common,
        executor,
        vus: whole(raw.vus, `${where}.vus`, 1, 1),
        iterations: whole(raw.iterations, `${where}.iterations`, 1, 1),
        maxDurationMs:
          raw.maxDuration === undefined ? 600_000 : durationMs(raw.maxDuration, `${where}.maxDuration`),
      };
  }
}

/**
 * Checks and normalizes the script's options. `exported`: the script's exported function names.
 * @throws HarnessConfigError naming the first option the harness does not implement or that is invalid.
 */
export function parseOptions(raw: Record<string, unknown>, exported: Set<string>): RunOptions {
  if ("__unserializable" in raw)
    throw new HarnessConfigError(
      `the script's options cannot be read as JSON: ${String(raw.__unserializable)}`,
    );
  for (const key of Object.keys(raw))
    if (!TOP_LEVEL.has(key))
      throw new HarnessConfigError(
        `option "${key}" is not implemented by the Gatehouse k6 test harness; it implements ${[...TOP_LEVEL].join(", ")}${["vus", "duration", "iterations", "stages"].includes(key) ? ' (write the load as options.scenarios, e.g. {"main": {"executor": "constant-vus", "vus": 2, "duration": "30s"}})' : ""}`,
      );
  const rawScenarios = raw.scenarios as Record<string, Record<string, unknown>> | undefined;
  if (rawScenarios !== undefined && (typeof rawScenarios !== "object" || rawScenarios === null))
    throw new HarnessConfigError("options.scenarios must be an object: scenario name → config");
  const scenarios = rawScenarios
    ? Object.entries(rawScenarios).map(([name, s]) => scenario(name, s ?? {}, exported))
    : [scenario("default", { executor: "per-vu-iterations", vus: 1, iterations: 1 }, exported)];
  if (scenarios.length === 0)
    throw new HarnessConfigError("options.scenarios is empty: give at least one scenario");
  const trendStats = (raw.summaryTrendStats as string[] | undefined) ?? [
    "avg",
    "min",
    "med",
    "max",
    "p(90)",
    "p(95)",
    "p(99)",
  ];
  if (
    !Array.isArray(trendStats) ||
    trendStats.some((s) => !/^(avg|min|med|max|count|p\(\d+(\.\d+)?\))$/.test(s))
  )
    throw new HarnessConfigError(
      'options.summaryTrendStats lists avg, min, med, max, count or p(N), e.g. ["avg", "p(95)"]',
    );
  return {
    scenarios,
    thresholds: raw.thresholds,
    setupTimeoutMs: raw.setupTimeout === undefined ? 60_000 : durationMs(raw.setupTimeout, "setupTimeout"),
    teardownTimeoutMs:
      raw.teardownTimeout === undefined ? 60_000 : durationMs(raw.teardownTimeout, "teardownTimeout"),
    tags: strings(raw.tags, "options.tags"),
    summaryTrendStats: trendStats,
  };
}

/** How many VUs `s` needs initialized before the test starts (k6 initializes them up front). */
export function initialVUs(s: Scenario): number {
  switch (s.executor) {
    case "constant-vus":
    case "per-vu-iterations":
      return s.vus;
    case "ramping-vus":
      return Math.max(s.startVUs, ...s.stages.map((st) => st.target));
    case "constant-arrival-rate":
    case "ramping-arrival-rate":
      return s.preAllocatedVUs;
  }
}
