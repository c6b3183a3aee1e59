/**
 * scripts/test-pool.ts: jobs run side by side on the lanes given, each job's output stays in one block,
 * and what a job leaves running in its process group is stopped when it ends (no orphaned servers).
 */
import assert from "node:assert/strict";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, test } from "node:test";
import { setTimeout as delay } from "node:timers/promises";
import { type Job, runPool } from "../test-pool.ts";

const dir = mkdtempSync(join(tmpdir(), "test-pool-"));
after(() => rmSync(dir, { recursive: true, force: true }));

const sh = (name: string, script: string): Job => ({
  name,
  cwd: dir,
  command: ["bash", "-c", script],
  kind: "tests",
});
/** Waits (up to 60 s) until `file` exists: a condition, not a fixed sleep. */
const waitFor = (file: string) =>
  `for i in $(seq 600); do [ -e ${file} ] && break; sleep 0.1; done; [ -e ${file} ]`;

test("two lanes run two jobs at the same time: each waits for the file the other writes", async () => {
  const ends: string[] = [];
  const results = await runPool(
    [
      sh("a", `touch a.started; ${waitFor("b.started")} && echo a-out`),
      sh("b", `touch b.started; ${waitFor("a.started")} && echo b-out`),
    ],
    2,
    () => {},
    (r) => ends.push(r.job.name),
  );
  assert.deepEqual(results.map((r) => [r.job.name, r.code, r.output.trim()]).sort(), [
    ["a", 0, "a-out"],
    ["b", 0, "b-out"],
  ]);
  assert.deepEqual(new Set(results.map((r) => r.lane)), new Set([1, 2]));
  assert.equal(ends.length, 2);
});

test("one lane runs jobs in the given order; a failing job reports its code and output", async () => {
  const results = await runPool(
    [sh("first", "echo one; exit 3"), sh("second", "echo two")],
    1,
    () => {},
    () => {},
  );
  assert.deepEqual(
    results.map((r) => [r.job.name, r.code, r.output, r.lane]),
    [
      ["first", 3, "one\n", 1],
      ["second", 0, "two\n", 1],
    ],
  );
  assert.ok(
    results[1] && results[0] && results[1].startedAt >= results[0].startedAt + results[0].seconds - 0.01,
  );
});

// The leftover holds the job's output pipe: the job still ends when its own process exits, not 300 s later.
test("a process a job leaves running in its group is stopped when the job ends", {
  timeout: 120_000,
}, async () => {
  const pidFile = join(dir, "leftover.pid");
  const [leaky] = await runPool(
    [sh("leaky", `(sleep 300 & echo $! > ${pidFile}); echo done`)],
    1,
    () => {},
    () => {},
  );
  assert.equal(leaky?.output, "done\n");
  assert.ok((leaky?.seconds ?? 300) < 100, `the job took ${leaky?.seconds} s`);
  const pid = Number(readFileSync(pidFile, "utf8"));
  // scripts/ is not a workspace, so it polls on its own rather than importing service-kit's waitUntil.
  for (let waited = 0; alive(pid) && waited < 10_000; waited += 100) await delay(100);
  assert.equal(alive(pid), false, `the leftover process ${pid} is still running`);
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
