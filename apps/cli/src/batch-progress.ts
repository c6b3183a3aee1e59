/**
 * Showing a batch's progress (batch-follow.ts) on stdout, three ways:
 * - a terminal: a progress bar (cli-progress) with applied/failed/rejected/outcome-unknown counts,
 *   rate and ETA ("ETA –" until a rate is known);
 * - `--json`: one JSON object per line, `{"approved","applied","failed","outcomeUnknown","rejected",
 *   "elapsedMs"}`, at most 4 per second, then a final line with `"done"` (approve-batch.ts);
 * - otherwise (a pipe, a file, CI logs): a plain line when the counts change, at most one per 5
 *   seconds, and at least one every 5 seconds while the batch waits (so a CI log shows it is alive).
 */
import cliProgress from "cli-progress";
import ms from "ms";
import type { BatchCounts } from "./batch-follow.ts";

/** Receives every change; renders at its own pace. */
export interface ProgressView {
  update(counts: BatchCounts): void;
  /** Renders the last counts and stops (the bar stays on screen, the cursor is shown again). */
  stop(): void;
}

/** Interval between JSON lines, ms (at most ~4 per second). */
export const JSON_INTERVAL_MS = 250;
/** Interval between plain lines, ms: at most one per interval, and at least one while waiting. */
export const PLAIN_INTERVAL_MS = 5000;

/** Actions of the batch that are final: applied, failed, outcome unknown or rejected. */
export const finished = (c: BatchCounts) => c.applied + c.failed + c.outcomeUnknown + c.rejected;

/** Final actions per second over the elapsed time; undefined before the first second or the first final one. */
function perSecond(c: BatchCounts): number | undefined {
  return c.elapsedMs < 1000 || finished(c) === 0 ? undefined : finished(c) / (c.elapsedMs / 1000);
}

/** "120.5/s" over the elapsed time, "" while no rate is known. */
function rate(c: BatchCounts): string {
  const r = perSecond(c);
  return r === undefined ? "" : `${r.toFixed(1)}/s`;
}

/** The time left at the rate so far, e.g. "40s", "3m"; "–" while no rate is known. */
export function eta(c: BatchCounts): string {
  const r = perSecond(c);
  if (r === undefined) return "–";
  const left = c.approved - finished(c);
  return left <= 0 ? "0s" : ms(Math.max(1000, Math.round((left / r) * 1000)));
}

/** The JSON line of `counts` (no newline). */
export function countsJson(c: BatchCounts): string {
  return JSON.stringify({
    approved: c.approved,
    applied: c.applied,
    failed: c.failed,
    outcomeUnknown: c.outcomeUnknown,
    rejected: c.rejected,
    elapsedMs: c.elapsedMs,
  });
}

/** "1190 applied, 4 failed, 5 rejected, 1 outcome unknown". */
export function outcomesText(c: BatchCounts): string {
  return `${c.applied} applied, ${c.failed} failed, ${c.rejected} rejected, ${c.outcomeUnknown} outcome unknown`;
}

/** "1200/5000 final: 1190 applied, 4 failed, 5 rejected, 1 outcome unknown (40.1/s, 30 s)". */
export function countsText(c: BatchCounts): string {
  const r = rate(c);
  return `${finished(c)}/${c.approved} final: ${outcomesText(c)} (${r ? `${r}, ` : ""}${Math.round(c.elapsedMs / 1000)} s)`;
}

/**
 * Calls `render` at most once per `intervalMs`, with the latest counts; `flush` renders what is left.
 * With `heartbeat`, the latest counts are rendered again (elapsed time brought up to date) when
 * `intervalMs` passed without a render, and before the first counts `heartbeat.idle(ms since the
 * view was made)` is called once per `intervalMs`.
 */
function throttled(
  intervalMs: number,
  render: (c: BatchCounts) => void,
  heartbeat?: { idle(elapsedMs: number): void },
): ProgressView {
  const created = Date.now();
  let idleAt = created;
  let last = Number.NEGATIVE_INFINITY;
  let pending: BatchCounts | undefined;
  /** The last counts given and when (Date.now()), for the heartbeat. */
  let latest: { counts: BatchCounts; at: number } | undefined;
  let timer: NodeJS.Timeout | undefined;
  const flush = () => {
    clearTimeout(timer);
    timer = undefined;
    if (pending) render(pending);
    pending = undefined;
    last = Date.now();
  };
  const beat = heartbeat
    ? setInterval(() => {
        const now = Date.now();
        if (!latest) {
          // Before the first counts (which are then rendered at once): a line per interval.
          if (now - idleAt < intervalMs) return;
          heartbeat.idle(now - created);
          idleAt = now;
          return;
        }
        if (pending || now - last < intervalMs) return;
        render({ ...latest.counts, elapsedMs: latest.counts.elapsedMs + (now - latest.at) });
        last = now;
      }, intervalMs / 5)
    : undefined;
  return {
    update(c) {
      pending = c;
      latest = { counts: c, at: Date.now() };
      const wait = last + intervalMs - Date.now();
      if (wait <= 0) flush();
      else timer ??= setTimeout(flush, wait);
    },
    stop() {
      clearInterval(beat);
      flush();
    },
  };
}

/**
 * The view for this output: `json` (from --json), else a bar when stdout is a terminal, else plain
 * lines. `out` is where it writes (stdout); `expected` how many actions the batch should hold, for
 * the plain lines while the approval service has not answered yet.
 */
export function progressView(
  json: boolean,
  out: NodeJS.WriteStream = process.stdout,
  expected = 0,
): ProgressView {
  if (json) return throttled(JSON_INTERVAL_MS, (c) => out.write(`${countsJson(c)}\n`));
  if (!out.isTTY) {
    return throttled(PLAIN_INTERVAL_MS, (c) => out.write(`approving: ${countsText(c)}\n`), {
      idle: (elapsedMs) =>
        out.write(
          `approving: waiting for the approval service to record ${expected} approval(s) (${Math.round(elapsedMs / 1000)} s)\n`,
        ),
    });
  }
  const bar = new cliProgress.SingleBar(
    {
      format: "approving |{bar}| {value}/{total} final · {outcomes} · {rate} · ETA {etaLeft}",
      stream: out,
      hideCursor: true,
      fps: 5,
    },
    cliProgress.Presets.shades_classic,
  );
  let started = false;
  let last: BatchCounts | undefined;
  const payload = (c: BatchCounts) => ({
    outcomes: outcomesText(c),
    rate: rate(c) || "–/s",
    etaLeft: eta(c),
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
