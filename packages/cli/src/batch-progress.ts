/**
 * Showing a batch's progress (batch-follow.ts) on stdout, three ways:
 * - a terminal: a progress bar (cli-progress) with applied/failed/rejected counts, rate and ETA;
 * - `--json`: one JSON object per line, `{"approved","applied","failed","rejected","elapsedMs"}`, at
 *   most 4 per second, then a final line with `"done"` (see `summaryJson`);
 * - otherwise (a pipe, a file, CI logs): a plain line every 5 seconds.
 */
import cliProgress from "cli-progress";
import type { BatchCounts } from "./batch-follow.ts";

/** Receives every change; renders at its own pace. */
export interface ProgressView {
  update(counts: BatchCounts): void;
  /** Renders the last counts and stops (the bar stays on screen). */
  stop(): void;
}

/** Interval between JSON lines, ms (at most ~4 per second). */
export const JSON_INTERVAL_MS = 250;
/** Interval between plain lines, ms. */
export const PLAIN_INTERVAL_MS = 5000;

const finished = (c: BatchCounts) => c.applied + c.failed + c.rejected;

/** "120.5/s" over the elapsed time, "" before the first second. */
function rate(c: BatchCounts): string {
  return c.elapsedMs < 1000 ? "" : `${(finished(c) / (c.elapsedMs / 1000)).toFixed(1)}/s`;
}

/** The JSON line of `counts` (no newline). */
export function countsJson(c: BatchCounts): string {
  return JSON.stringify({
    approved: c.approved,
    applied: c.applied,
    failed: c.failed,
    rejected: c.rejected,
    elapsedMs: c.elapsedMs,
  });
}

/** "1200/5000 final: 1190 applied, 5 failed, 5 rejected (40.1/s, 30 s)". */
export function countsText(c: BatchCounts): string {
  const r = rate(c);
  return `${finished(c)}/${c.approved} final: ${c.applied} applied, ${c.failed} failed, ${c.rejected} rejected (${r ? `${r}, ` : ""}${Math.round(c.elapsedMs / 1000)} s)`;
}

/** Calls `render` at most once per `intervalMs`, with the latest counts; `flush` renders what is left. */
function throttled(intervalMs: number, render: (c: BatchCounts) => void): ProgressView {
  let last = 0;
  let pending: BatchCounts | undefined;
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    if (pending) render(pending);
    pending = undefined;
    last = Date.now();
  };
  return {
    update(c) {
      pending = c;
      const wait = last + intervalMs - Date.now();
      if (wait <= 0) flush();
      else timer ??= setTimeout(flush, wait);
    },
    stop: flush,
  };
}

/**
 * The view for this output: `json` (from --json), else a bar when stdout is a terminal, else plain
 * lines. `out` is where it writes (stdout).
 */
export function progressView(json: boolean, out: NodeJS.WriteStream = process.stdout): ProgressView {
  if (json) return throttled(JSON_INTERVAL_MS, (c) => out.write(`${countsJson(c)}\n`));
  if (!out.isTTY) return throttled(PLAIN_INTERVAL_MS, (c) => out.write(`approving: ${countsText(c)}\n`));
  const bar = new cliProgress.SingleBar(
    {
      format:
        "approving |{bar}| {value}/{total} final · {applied} applied, {failed} failed, {rejected} rejected · {rate} · ETA {eta_formatted}",
      stream: out,
      hideCursor: true,
      etaBuffer: 200,
      fps: 5,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  let last: BatchCounts | undefined;
  const payload = (c: BatchCounts) => ({
    applied: c.applied,
    failed: c.failed,
    rejected: c.rejected,
    rate: rate(c) || "–/s",
  });
  return {
    update(c) {
      last = c;
      if (!started) {
        bar.start(c.approved, finished(c), payload(c));
        started = true;
      }
      bar.setTotal(c.approved);
      bar.update(finished(c), payload(c));
    },
    stop() {
      if (started && last) bar.update(finished(last), payload(last));
      if (started) bar.stop();
    },
  };
}
