/**
 * GATEKEEPER_APPLY_MAX: how long the worker waits for one apply, per gatekeeper kind, while the
 * gatekeeper reports the call running ("mcp=15m,git=5m"; durations as Temporal writes them:
 * "90s", "15m", "2h", "1500ms"). Kinds not listed wait DEFAULT_APPLY_MAX_MS (15 minutes).
 */
import { msToNumber } from "@temporalio/common";

/** The longest maximum accepted: 12 hours, in ms (the apply activity's start-to-close backstop is above it). */
export const APPLY_MAX_LIMIT_MS = 12 * 60 * 60 * 1000;

/** The shortest maximum accepted: 1 second, in ms. */
export const APPLY_MAX_FLOOR_MS = 1000;

/**
 * Parses "mcp=15m,git=5m" into `{ mcp: 900000, git: 300000 }` (ms); blank parts are skipped.
 * @throws Error naming the part that is wrong and what is expected, e.g.
 *   `"mcp=soon" is not kind=duration (e.g. mcp=15m,git=5m)`.
 */
export function parseApplyMax(text: string): Record<string, number> {
  const out: Record<string, number> = {};
  for (const part of text
    .split(",")
    .map((p) => p.trim())
    .filter(Boolean)) {
    const [kind, duration, ...rest] = part.split("=").map((p) => p.trim());
    let ms = Number.NaN;
    try {
      if (duration) ms = msToNumber(duration as Parameters<typeof msToNumber>[0]);
    } catch {
      // reported below
    }
    if (!kind || !duration || rest.length > 0 || !Number.isFinite(ms)) {
      throw new Error(`"${part}" is not kind=duration (e.g. mcp=15m,git=5m)`);
    }
    if (ms < APPLY_MAX_FLOOR_MS || ms > APPLY_MAX_LIMIT_MS) {
      throw new Error(`"${part}" must be between 1s and 12h`);
    }
    out[kind] = ms;
  }
  return out;
}
