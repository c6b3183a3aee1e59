/** Durations in configuration: "7d", "12h", "30m", "90s", "250ms", or a bare number of milliseconds. */

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/**
 * Parses a duration into milliseconds.
 * @returns undefined when `text` is not a positive duration (the caller names the variable).
 */
export function parseDurationMs(text: string): number | undefined {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h|d)?\s*$/.exec(text);
  if (!m) return undefined;
  const ms = Number(m[1]) * (UNIT_MS[m[2] ?? "ms"] ?? 1);
  return Number.isFinite(ms) && ms >= 1 ? Math.round(ms) : undefined;
}
