/**
 * The test command's runner (scripts/test.sh runs the set-up first, then this): the checks (biome, buf,
 * typecheck) and every test unit, a few at a time, longest first; then a summary that says where the time
 * went (each lane's jobs add up to the run's wall time), the 20 slowest tests, the known gaps (TODO
 * tests), each failure with its error, and "N passed, N failed, N todo". Exits 1 on any failure.
 *
 * Usage: test-run.ts [--changed] [--jobs N] [--list] [unit | package folder | package name ...]
 *   no unit      every check and every unit
 *   units        only those units, with the checks of their packages (biome on their folders, their typecheck)
 *   --changed    the units the working tree's changes (against HEAD, untracked files too) touch, and their dependents
 *   --jobs N     how many jobs run at once (default GATEHOUSE_TEST_JOBS, else 3: most tests wait on servers)
 *   --list       print the plan (jobs in start order) and exit
 */
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { homedir } from "node:os";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import {
  allUnits,
  longestFirst,
  selectUnits,
  type TestUnit,
  unitsForChanges,
  workspacePackages,
} from "./test-plan.ts";
import { type Job, type JobResult, runPool } from "./test-pool.ts";
import { summarizeTap, type TapSummary } from "./test-tap.ts";

const ROOT = join(import.meta.dirname, "..");

function fail(message: string): never {
  process.stderr.write(`${message}\n`);
  process.exit(2);
}

function timesFile(): string {
  const cache =
    process.env.GATEHOUSE_CACHE_DIR ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), ".cache"), "gatehouse");
  return join(cache, "test-times.json");
}

/**
 * Each job's time (seconds) from the last run on this machine, over the times committed in
 * scripts/test-times.json (measured on a 2-core machine), which order the jobs on a machine that has not
 * run the tests yet. Only the order depends on them.
 */
function readTimes(): Record<string, number> {
  const read = (file: string) => {
    try {
      return JSON.parse(readFileSync(file, "utf8")) as Record<string, number>;
    } catch {
      return {};
    }
  };
  return { ...read(join(ROOT, "scripts/test-times.json")), ...read(timesFile()) };
}

/** Times recorded on this machine only (the file each run updates). */
function readLocalTimes(): Record<string, number> {
  try {
    return JSON.parse(readFileSync(timesFile(), "utf8"));
  } catch {
    return {};
  }
}

function changedFiles(): string[] {
  const git = (...args: string[]) =>
    execFileSync("git", ["-C", ROOT, ...args], { encoding: "utf8" })
      .split("\n")
      .filter(Boolean);
  return [
    ...new Set([...git("diff", "--name-only", "HEAD"), ...git("ls-files", "--others", "--exclude-standard")]),
  ];
}

/**
 * The check jobs for a run: all of them, or those of the selected units' packages (named "(selected)",
 * so their short times never stand for the whole check's in the recorded times).
 */
function checkJobs(units: TestUnit[], whole: boolean): Job[] {
  const job = (name: string, command: string[]): Job => ({
    name: whole ? name : `${name} (selected)`,
    cwd: ROOT,
    command,
    kind: "check",
  });
  if (whole)
    return [
      job("check: biome", ["npx", "biome", "ci", "."]),
      job("check: buf", ["bash", "-c", "npx buf lint && npx buf format --diff --exit-code"]),
      job("check: typecheck", [
        "npx",
        "turbo",
        "run",
        "typecheck",
        "--concurrency=2",
        "--output-logs=errors-only",
      ]),
      job("check: scripts typecheck", ["npx", "tsc", "-p", "scripts/tsconfig.json"]),
    ];
  const folders = [...new Set(units.map((u) => u.name))];
  const packages = workspacePackages(ROOT);
  const names = [
    ...new Set(units.map((u) => packages.find((p) => p.dir === u.packageDir)?.name).filter(Boolean)),
  ];
  const jobs = [job("check: biome", ["npx", "biome", "ci", ...folders])];
  if (names.length > 0)
    jobs.push(
      job("check: typecheck", [
        "npx",
        "turbo",
        "run",
        "typecheck",
        "--concurrency=2",
        "--output-logs=errors-only",
        ...names.map((n) => `--filter=${n}`),
      ]),
    );
  if (units.some((u) => u.name === "scripts"))
    jobs.push(job("check: scripts typecheck", ["npx", "tsc", "-p", "scripts/tsconfig.json"]));
  if (units.some((u) => u.packageDir === "packages/proto"))
    jobs.push(job("check: buf", ["bash", "-c", "npx buf lint && npx buf format --diff --exit-code"]));
  return jobs;
}

function fmt(seconds: number): string {
  if (Number.isNaN(seconds)) return "?";
  if (seconds < 10) return `${seconds.toFixed(1)}s`;
  return seconds >= 60
    ? `${Math.floor(seconds / 60)}m${String(Math.round(seconds % 60)).padStart(2, "0")}s`
    : `${Math.round(seconds)}s`;
}

function parseOptions() {
  return parseArgs({
    allowPositionals: true,
    options: { changed: { type: "boolean" }, jobs: { type: "string" }, list: { type: "boolean" } },
  });
}

async function main(): Promise<void> {
  let parsed: ReturnType<typeof parseOptions>;
  try {
    parsed = parseOptions();
  } catch (e) {
    fail(
      `test: ${(e as Error).message.split(". ")[0]}. Options: --changed, --jobs N, --list, then units or packages`,
    );
  }
  const { values, positionals } = parsed;
  const jobsArg = values.jobs ?? process.env.GATEHOUSE_TEST_JOBS ?? "3";
  const lanes = Number(jobsArg);
  if (!Number.isInteger(lanes) || lanes < 1 || lanes > 16)
    fail(`test: --jobs (or GATEHOUSE_TEST_JOBS) must be a whole number from 1 to 16, got "${jobsArg}"`);
  if (values.changed && positionals.length > 0) fail("test: give either --changed or units, not both");

  const packages = workspacePackages(ROOT);
  const every = allUnits(ROOT);
  let units: TestUnit[];
  try {
    units = values.changed
      ? unitsForChanges(every, packages, changedFiles())
      : positionals.length > 0
        ? selectUnits(every, packages, positionals)
        : every;
  } catch (e) {
    fail((e as Error).message);
  }
  if (values.changed && units.length === 0) {
    console.log(
      "test: no change in the working tree touches a test unit (docs only, or no change against HEAD)",
    );
    return;
  }
  const whole = units.length === every.length;
  const times = readTimes();
  const jobs: Job[] = [
    ...checkJobs(units, whole),
    ...units.map((u): Job => ({ name: u.name, cwd: join(ROOT, u.cwd), command: u.command, kind: "tests" })),
  ];
  const ordered = longestFirst(jobs, times);
  if (values.list) {
    for (const j of ordered)
      console.log(`${j.name}\t${fmt(times[j.name] ?? Number.NaN)}\t${j.command.join(" ")}`);
    return;
  }
  console.log(`== ${ordered.length} jobs on ${lanes} lanes, longest first (times from the last run)`);

  const t0 = performance.now();
  const summaries = new Map<string, TapSummary>();
  const results = await runPool(
    ordered,
    lanes,
    (job, lane) => console.log(`== start: ${job.name} (lane ${lane})`),
    (r) => {
      const ok = r.code === 0;
      console.log(
        `== ${r.job.kind === "tests" ? "tests: " : ""}${r.job.name} (lane ${r.lane}, ${fmt(r.seconds)}, ${ok ? "ok" : `exit ${r.code ?? r.signal}`})`,
      );
      process.stdout.write(r.output.endsWith("\n") || r.output === "" ? r.output : `${r.output}\n`);
      if (r.job.kind === "tests") summaries.set(r.job.name, summarizeTap(r.output));
    },
  );
  const wall = (performance.now() - t0) / 1000;

  const recorded = readLocalTimes();
  for (const r of results) recorded[r.job.name] = Math.round(r.seconds);
  try {
    mkdirSync(dirname(timesFile()), { recursive: true });
    writeFileSync(timesFile(), `${JSON.stringify(recorded, null, 2)}\n`);
  } catch {
    // a read-only cache only loses the ordering hint
  }
  report(results, summaries, wall, lanes);
}

function report(results: JobResult[], summaries: Map<string, TapSummary>, wall: number, lanes: number): void {
  const setupSeconds = Number(process.env.GATEHOUSE_TEST_SETUP_SECONDS ?? Number.NaN);
  console.log("\n== where the time went");
  if (!Number.isNaN(setupSeconds))
    console.log(
      `set-up ${fmt(setupSeconds)}; checks and tests ${fmt(wall)} on ${lanes} lanes; total ${fmt(setupSeconds + wall)}`,
    );
  for (let lane = 1; lane <= lanes; lane++) {
    const mine = results.filter((r) => r.lane === lane).sort((a, b) => a.startedAt - b.startedAt);
    const sum = mine.reduce((s, r) => s + r.seconds, 0);
    console.log(
      `lane ${lane} (${fmt(sum)}): ${mine.map((r) => `${r.job.name} ${fmt(r.seconds)}`).join(", ")}`,
    );
  }
  const tests = [...summaries.entries()].flatMap(([unit, s]) => s.durations.map((d) => ({ unit, ...d })));
  tests.sort((a, b) => b.ms - a.ms);
  console.log("== the 20 slowest tests");
  for (const t of tests.slice(0, 20)) console.log(`${fmt(t.ms / 1000).padStart(6)}  ${t.unit}: ${t.name}`);

  let passed = 0;
  let failed = 0;
  let todo = 0;
  const gaps: string[] = [];
  const failures: string[] = [];
  for (const r of results) {
    if (r.job.kind === "check") {
      if (r.code !== 0) {
        failed++;
        failures.push(
          `--- ${r.job.name}: exited ${r.code ?? r.signal} (its output is above, under "== check: ${r.job.name}")`,
        );
      }
      continue;
    }
    const s = summaries.get(r.job.name) as TapSummary;
    passed += s.pass;
    failed += s.fail;
    todo += s.todo;
    gaps.push(...s.todoNames.map((n) => `  ${r.job.name}: ${n}`));
    for (const f of s.failures) failures.push(`--- ${r.job.name}: ${f.name}`, ...f.diagnostic);
    if (r.code !== 0 && s.fail === 0) {
      failed++;
      failures.push(
        `--- ${r.job.name}: its tests exited ${r.code ?? r.signal} without a failing test in their report (see the output above)`,
      );
    }
  }
  if (gaps.length > 0) console.log(`known gaps (TODO tests, not counted as failures):\n${gaps.join("\n")}`);
  if (failures.length > 0)
    console.log(`failures (each failing test with its error):\n${failures.join("\n")}`);
  console.log(`${passed} passed, ${failed} failed, ${todo} todo`);
  if (failed > 0 || results.some((r) => r.code !== 0)) process.exitCode = 1;
}

if (!existsSync(join(ROOT, "node_modules"))) fail("test: node_modules is missing; run npm run setup first");
await main();
