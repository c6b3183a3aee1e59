/** What every part of `npm run bench` shares: env knobs, percentile stats, the table row, gRPC and snippet helpers. */
import { execFileSync } from "node:child_process";
import { performance } from "node:perf_hooks";
import type { ExecuteResult } from "@gatehouse/proto";
import { callUnary, type UnaryMethod } from "@gatehouse/service-kit";

/** A positive integer from the environment, or `fallback`. @throws Error naming the variable. */
export function envInt(name: string, fallback: number): number {
  const raw = process.env[name];
  if (raw === undefined || raw === "") return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1) throw new Error(`${name} must be a positive integer, got "${raw}"`);
  return n;
}

/** A string from the environment, or `fallback` when unset or empty. */
export function envStr(name: string, fallback: string): string {
  const raw = process.env[name];
  return raw === undefined || raw === "" ? fallback : raw;
}

/** The dev stack's sandbox mode from BENCH_SANDBOX (default auto). @throws Error naming the accepted values. */
export function envSandbox(): "auto" | "gvisor" | "none" {
  const mode = envStr("BENCH_SANDBOX", "auto");
  if (mode !== "auto" && mode !== "gvisor" && mode !== "none")
    throw new Error(`BENCH_SANDBOX must be auto, gvisor or none, got "${mode}"`);
  return mode;
}

/** ms of each `call(i)`, after `warmup` unmeasured ones (i counts the warm-up calls too). */
export async function timed(
  n: number,
  warmup: number,
  call: (i: number) => Promise<void>,
): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < n + warmup; i++) {
    const began = performance.now();
    await call(i);
    if (i >= warmup) samples.push(performance.now() - began);
  }
  return samples;
}

/** Runs a bench's `main`, exiting 0 when it resolves and 1 (error printed) when it rejects. */
export function runBench(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    (err) => {
      console.error(err);
      process.exit(1);
    },
  );
}

/** Summary of a sample set, milliseconds (or whatever the samples are in). */
export interface Stats {
  n: number;
  p50: number;
  p99: number;
  mean: number;
  min: number;
  max: number;
}

/** Rounds to `digits` decimals. */
export const round = (x: number, digits = 2) => {
  const f = 10 ** digits;
  return Math.round(x * f) / f;
};

/** Nearest-rank percentiles (p99 of fewer than 100 samples is the maximum). */
export function stats(samples: number[]): Stats {
  const s = [...samples].sort((a, b) => a - b);
  const at = (q: number) => s[Math.min(s.length - 1, Math.max(0, Math.ceil(q * s.length) - 1))] ?? Number.NaN;
  const mean = s.reduce((a, b) => a + b, 0) / (s.length || 1);
  return {
    n: s.length,
    p50: round(at(0.5), 3),
    p99: round(at(0.99), 3),
    mean: round(mean, 3),
    min: round(s[0] ?? Number.NaN, 3),
    max: round(s[s.length - 1] ?? Number.NaN, 3),
  };
}

/** The p50 of `xs`. */
export const median = (xs: number[]) => stats(xs).p50;

/** One row of the results table: a measurement next to its baseline from the same run. */
export interface Row {
  id: string;
  measurement: string;
  value: number;
  baseline: string;
  baselineValue: number;
  unit: string;
  /** value / baselineValue */
  ratio: number;
  /** The goal for this figure, e.g. "≤ 5 ms" (printed in its own column when any row has one). */
  goal?: string;
  note?: string;
}

/** A number for the table: thousands separated, three significant decimals below 10. */
export function fmt(x: number): string {
  if (!Number.isFinite(x)) return String(x);
  if (Math.abs(x) >= 1000) return Math.round(x).toLocaleString("en-US");
  return x.toFixed(Math.abs(x) >= 100 ? 1 : Math.abs(x) >= 10 ? 2 : 3);
}

/** Prints `rows` as an aligned text table on stdout (measurement, value, baseline, ratio[, goal]). */
export function printTable(rows: Row[]): void {
  const withGoal = rows.some((r) => r.goal);
  const header = [
    "measurement",
    "value",
    "baseline",
    "baseline value",
    "ratio",
    ...(withGoal ? ["goal"] : []),
  ];
  const body = rows.map((r) => [
    r.measurement,
    `${fmt(r.value)} ${r.unit}`,
    r.baseline,
    `${fmt(r.baselineValue)} ${r.unit}`,
    `${r.ratio.toFixed(2)}x`,
    ...(withGoal ? [r.goal ?? ""] : []),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] as string).length)));
  const numeric = new Set([1, 3, 4]);
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (numeric.has(i) ? c.padStart(widths[i] as number) : c.padEnd(widths[i] as number)))
      .join(" | ");
  console.log(line(header));
  console.log(widths.map((w) => "-".repeat(w)).join("-|-"));
  for (const b of body) console.log(line(b));
}

/** A unary gRPC call as a promise, with a deadline (ms, default 120 s). */
export function unary<Req, Res>(
  client: object,
  method: UnaryMethod<Req, Res>,
  req: Req,
  deadlineMs = 120_000,
): Promise<Res> {
  return callUnary(client, method, req, deadlineMs);
}

/** A snippet's return value. @throws Error when the execution failed. */
export function returned(r: ExecuteResult): unknown {
  if (!r.ok) throw new Error(`bench snippet failed: ${r.error?.name}: ${r.error?.message}`);
  return r.returnJson ? JSON.parse(r.returnJson) : undefined;
}

/** A progress line on stderr. */
export function log(msg: string) {
  process.stderr.write(`[bench] ${msg}\n`);
}

/** The commit checked out in `cwd`, with "+dirty" when the tree has changes ("" outside git). */
export function gitCommit(cwd: string): string {
  try {
    const sha = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd, encoding: "utf8" }).trim();
    const dirty = execFileSync("git", ["status", "--porcelain", "--untracked-files=no"], {
      cwd,
      encoding: "utf8",
    }).trim();
    return dirty ? `${sha}+dirty` : sha;
  } catch {
    return "";
  }
}
