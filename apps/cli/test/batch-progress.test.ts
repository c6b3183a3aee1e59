/**
 * The batch progress views without services: the plain view (a pipe, a CI log) prints a line at
 * least every 5 s while a batch waits, and at most one per 5 s while it moves; the ETA is "–" until
 * a rate is known. Time is node:test's mock clock, so nothing here waits for real.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import type { BatchCounts } from "../src/batch-follow.ts";
import { countsJson, eta, PLAIN_INTERVAL_MS, progressView } from "../src/batch-progress.ts";

/** A non-terminal stream that keeps what is written. */
function pipe(): { stream: NodeJS.WriteStream; lines: string[] } {
  const lines: string[] = [];
  const stream = {
    isTTY: false,
    write(chunk: string) {
      lines.push(...chunk.split("\n").filter(Boolean));
      return true;
    },
  } as unknown as NodeJS.WriteStream;
  return { stream, lines };
}

const counts = (over: Partial<BatchCounts> = {}): BatchCounts => ({
  approved: 10,
  applied: 0,
  failed: 0,
  outcomeUnknown: 0,
  rejected: 0,
  elapsedMs: 0,
  ...over,
});

test("in a pipe a line is printed at least every 5 s while nothing changes, with the elapsed time", (t) => {
  t.mock.timers.enable({ apis: ["setInterval", "setTimeout", "Date"] });
  const { stream, lines } = pipe();
  const view = progressView(false, stream);
  view.update(counts({ applied: 2, elapsedMs: 1000 }));
  assert.equal(lines.length, 1);
  assert.match(
    lines[0]!,
    /^approving: 2\/10 final: 2 applied, 0 failed, 0 rejected, 0 outcome unknown \(2\.0\/s, 1 s\)$/,
  );
  t.mock.timers.tick(PLAIN_INTERVAL_MS - 1000);
  assert.equal(lines.length, 1, "not before 5 s");
  t.mock.timers.tick(1000);
  assert.equal(lines.length, 2, "one line after 5 s without a change");
  assert.match(lines[1]!, /2\/10 final: .* \(0\.3\/s, 6 s\)$/);
  t.mock.timers.tick(PLAIN_INTERVAL_MS);
  assert.equal(lines.length, 3, "and another 5 s later");
  assert.match(lines[2]!, /, 11 s\)$/);
  view.stop();
  t.mock.timers.tick(3 * PLAIN_INTERVAL_MS);
  assert.equal(lines.length, 3, "nothing after stop");
});

test("in a pipe a line is printed every 5 s while the approval service has not recorded the approvals", (t) => {
  t.mock.timers.enable({ apis: ["setInterval", "setTimeout", "Date"] });
  const { stream, lines } = pipe();
  const view = progressView(false, stream, 5000);
  t.mock.timers.tick(PLAIN_INTERVAL_MS - 1000);
  assert.deepEqual(lines, [], "not before 5 s");
  t.mock.timers.tick(1000);
  assert.deepEqual(lines, ["approving: waiting for the approval service to record 5000 approval(s) (5 s)"]);
  t.mock.timers.tick(PLAIN_INTERVAL_MS);
  assert.equal(lines.at(-1), "approving: waiting for the approval service to record 5000 approval(s) (10 s)");
  view.update(counts({ approved: 5000, elapsedMs: 10_500 }));
  assert.match(lines.at(-1)!, /^approving: 0\/5000 final/);
  assert.equal(lines.length, 3);
  view.stop();
});

test("in a pipe changes are printed at most once per 5 s, the latest counts", (t) => {
  t.mock.timers.enable({ apis: ["setInterval", "setTimeout", "Date"] });
  const { stream, lines } = pipe();
  const view = progressView(false, stream);
  view.update(counts({ applied: 1, elapsedMs: 100 }));
  for (let i = 2; i <= 5; i++) {
    t.mock.timers.tick(500);
    view.update(counts({ applied: i, elapsedMs: 100 + 500 * (i - 1) }));
  }
  assert.equal(lines.length, 1);
  t.mock.timers.tick(PLAIN_INTERVAL_MS);
  assert.equal(lines.length, 2);
  assert.match(lines[1]!, /^approving: 5\/10 final/);
  view.stop();
});

test("the ETA is – until a rate is known, then the time left at that rate", () => {
  assert.equal(eta(counts({ elapsedMs: 0 })), "–");
  assert.equal(eta(counts({ elapsedMs: 30_000 })), "–", "nothing final yet: no rate");
  assert.equal(eta(counts({ applied: 1, elapsedMs: 500 })), "–", "under a second: no rate yet");
  assert.equal(eta(counts({ applied: 5, elapsedMs: 10_000 })), "10s");
  assert.equal(eta(counts({ applied: 1, elapsedMs: 60_000 })), "9m");
  assert.equal(eta(counts({ applied: 10, elapsedMs: 5000 })), "0s");
});

test("a JSON progress line counts outcome unknown apart from failed", () => {
  assert.deepEqual(
    JSON.parse(countsJson(counts({ applied: 7, failed: 1, outcomeUnknown: 2, elapsedMs: 5 }))),
    {
      approved: 10,
      applied: 7,
      failed: 1,
      outcomeUnknown: 2,
      rejected: 0,
      elapsedMs: 5,
    },
  );
});
