/** k6 durations: "1h2m3s", "500ms", "1.5s", "2m" (and a bare number where k6 takes milliseconds). */
import { HarnessConfigError } from "./errors.ts";

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/**
 * `value` in milliseconds.
 * @param what names the option in the error, e.g. "scenarios.agents.duration".
 * @param allowNumber whether a bare number (ms) is accepted, as for params.timeout.
 * @throws HarnessConfigError naming `what` and the accepted forms.
 */
export function durationMs(value: unknown, what: string, allowNumber = false): number {
  if (allowNumber && typeof value === "number" && Number.isFinite(value) && value >= 0) return value;
  if (typeof value === "string" && value !== "") {
    const re = /(\d+(?:\.\d+)?)(ms|h|m|s)/gy;
    let total = 0;
    let at = 0;
    for (let m = re.exec(value); m; m = re.exec(value)) {
      total += Number(m[1]) * (UNIT_MS[m[2] as string] as number);
      at = re.lastIndex;
    }
    if (at === value.length) return total;
  }
  throw new HarnessConfigError(
    `${what} must be a duration such as "30s", "1m30s" or "500ms"${allowNumber ? " (or milliseconds)" : ""}, got ${JSON.stringify(value)}`,
  );
}

/** `ms` as k6 prints durations: "1m30s", "2.5s", "250ms". */
export function formatDuration(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const s = ms / 1000;
  if (s < 60) return `${Number(s.toFixed(1))}s`;
  const m = Math.floor(s / 60);
  const rest = Math.round(s - m * 60);
  return rest ? `${m}m${rest}s` : `${m}m`;
}
