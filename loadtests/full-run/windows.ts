/**
 * The knee profile's samples cut into its levels: each level is a short ramp then a hold; a level's
 * figures come from the samples taken during its hold (a sample's time is when it was recorded, i.e.
 * when its request ended).
 */
import { readFileSync } from "node:fs";

/** One sample of `--out json`. */
export interface Point {
  metric: string;
  time: number;
  value: number;
  tags: Record<string, string>;
}

/** Reads a `--out json` file. */
export function readPoints(file: string): Point[] {
  return readFileSync(file, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((l) => {
      const p = JSON.parse(l);
      return { metric: p.metric, time: Date.parse(p.data.time), value: p.data.value, tags: p.data.tags };
    });
}

/** A level's hold: [from, to) epoch ms. */
export interface Window {
  level: number;
  from: number;
  to: number;
}

/**
 * The holds of `levels`: after `warmupS`, each level is `rampS` then `holdS` seconds, counted from the
 * first sample of `scenario` outside setup (its first iteration started then, within one request's time).
 */
export function holds(
  points: Point[],
  scenario: string,
  levels: number[],
  warmupS: number,
  rampS: number,
  holdS: number,
): Window[] {
  const t0 = Math.min(
    ...points.filter((p) => p.tags.scenario === scenario && p.tags.group !== "::setup").map((p) => p.time),
  );
  return levels.map((level, i) => {
    const from = t0 + (warmupS + i * (rampS + holdS) + rampS) * 1000;
    return { level, from, to: from + holdS * 1000 };
  });
}

/** Linear-interpolated percentile (k6's), 0 for none. */
export function percentile(values: number[], pct: number): number {
  if (values.length === 0) return Number.NaN;
  const s = [...values].sort((a, b) => a - b);
  const i = (pct / 100) * (s.length - 1);
  const lo = s[Math.floor(i)] as number;
  const hi = s[Math.ceil(i)] as number;
  return lo + (hi - lo) * (i - Math.floor(i));
}

/** The values of `metric` in `w` (optionally only those of `scenario`). */
export function valuesIn(points: Point[], metric: string, w: Window, scenario?: string): number[] {
  return points
    .filter(
      (p) =>
        p.metric === metric &&
        p.time >= w.from &&
        p.time < w.to &&
        (!scenario || p.tags.scenario === scenario),
    )
    .map((p) => p.value);
}

/** Share of non-zero values (a Rate), NaN for none. */
export function rate(values: number[]): number {
  return values.length ? values.filter((v) => v !== 0).length / values.length : Number.NaN;
}
