/**
 * `npm run loadtest`: the full run on this machine, about 10 minutes. It starts `gatehouse dev` (its
 * own process, CPU-profiled with node --cpu-prof), then runs the three scenario scripts on the test
 * harness with PROFILE=knee — the number of approvers stepped through KNEE_APPROVERS, held web
 * sessions through KNEE_SESSIONS, then the agents' snippet rate through KNEE_RATES (last: they leave
 * the most work behind) — waiting before each phase until the services are idle again. Each level is
 * held LOADTEST_HOLD_S seconds, after a 10 s warm-up at the first level; the report gives each level's
 * SLO figures from the samples of its hold, next to each process's CPU (from /proc). Sustained = the
 * highest level meeting every SLO before the first level that breaks one (the knee). The service that
 * saturates first: the busiest process at the knee, and inside `gatehouse dev` (one Node process for
 * every service) the split of its main thread's CPU profile while the scenarios ran, by service (the
 * profiler's own cost, about 1% of a core at a 10 ms interval, is in the figures). Also measures the
 * observation append directly (the scenarios cannot see it). Writes bench-results/loadtest.json (and
 * the samples and profile under bench-results/loadtest-samples/); docs/slo.md records a run.
 *
 * Env: KNEE_RATES (2,4,6,8,10,12,16 snippets/s), KNEE_APPROVERS (1,2,4,6,8), KNEE_SESSIONS (20,40,80),
 * LOADTEST_HOLD_S (25), AGENT_WORKSPACES (8).
 */
import { execFileSync } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { CpuSampler } from "./full-run/cpu-sampler.ts";
import { observationAppendMs } from "./full-run/observation-append.ts";
import { attributeProfile } from "./full-run/profile.ts";
import { phaseMarkdown } from "./full-run/report-markdown.ts";
import {
  holds,
  type Point,
  percentile,
  rate,
  readPoints,
  valuesIn,
  type Window,
} from "./full-run/windows.ts";
import { startGatehouseDev } from "./gatehouse-dev.ts";
import { runHarness } from "./harness-process.ts";
import { SLO } from "./scripts/lib/objectives.js";
import { RAMP_SECONDS, WARMUP_SECONDS } from "./scripts/lib/stages.js";

const ROOT = resolve(import.meta.dirname, "..");
const SCRIPTS = join(import.meta.dirname, "scripts");
const HOLD_S = numberEnv("LOADTEST_HOLD_S", 25);
const RATES = listEnv("KNEE_RATES", [2, 4, 6, 8, 10, 12, 16]);
const APPROVERS = listEnv("KNEE_APPROVERS", [1, 2, 4, 6, 8]);
const SESSIONS = listEnv("KNEE_SESSIONS", [20, 40, 80]);

function numberEnv(name: string, fallback: number): number {
  const v = Number(process.env[name] ?? fallback);
  if (!Number.isInteger(v) || v < 1) throw new Error(`${name} must be a positive whole number`);
  return v;
}
function listEnv(name: string, fallback: number[]): number[] {
  const raw = process.env[name];
  if (!raw) return fallback;
  const out = raw.split(",").map(Number);
  if (out.some((n) => !Number.isInteger(n) || n < 1))
    throw new Error(`${name} must be positive whole numbers, comma-separated`);
  return out;
}
const r1 = (x: number) => (Number.isFinite(x) ? Math.round(x * 10) / 10 : x);
const log = (m: string) => process.stderr.write(`[loadtest] ${m}\n`);

/** One level's figures. */
interface Level {
  level: number;
  figures: Record<string, number>;
  /** Which objectives this level broke (empty: met them all). */
  broken: string[];
  cpu: { processes: Record<string, number>; devThreads: Record<string, number>; load1: number };
}

async function main() {
  const loadBefore = loadavg().map((x) => r1(x));
  const work = mkdtempSync(join(tmpdir(), "gatehouse-loadtest-run-"));
  const profDir = join(work, "profile");
  const outDir = join(ROOT, "bench-results");
  const samplesDir = join(outDir, "loadtest-samples");
  mkdirSync(samplesDir, { recursive: true });
  log("starting gatehouse dev (CPU-profiled)");
  const dev = await startGatehouseDev({
    nodeFlags: ["--cpu-prof", "--cpu-prof-interval=10000", `--cpu-prof-dir=${profDir}`],
  });
  const sampler = new CpuSampler(dev.child.pid as number);
  // The agents' workspaces belong to dev-admin, so the thousands of writes they leave pending are in
  // dev-admin's inbox, not in the inbox the approvers and web sessions (dev-approver) load after them.
  const env = {
    GATEHOUSE_URL: dev.url,
    GATEHOUSE_AGENT_TOKEN: dev.tokens["dev-admin"] as string,
    GATEHOUSE_APPROVER_TOKEN: dev.tokens["dev-approver"] as string,
    PROFILE: "knee",
    KNEE_HOLD: String(HOLD_S),
  };
  const agentsOwnInbox = { GATEHOUSE_APPROVER_TOKEN: dev.tokens["dev-admin"] as string };
  const phase = async (script: string, extra: Record<string, string>, levels: number[], scenario: string) => {
    const out = join(samplesDir, `${script}.jsonl`);
    const budget = (WARMUP_SECONDS + levels.length * (RAMP_SECONDS + HOLD_S) + 240) * 1000;
    log(`${script}: levels ${levels.join(", ")}, ${HOLD_S} s each`);
    const run = await runHarness(
      join(SCRIPTS, script),
      { ...env, ...extra },
      {
        timeoutMs: budget,
        outJson: out,
        onStart: (pid) => sampler.extra.add(pid),
      },
    );
    if (run.code !== 0 && run.code !== 99)
      throw new Error(`${script} stopped (exit ${run.code}):\n${run.stderr.slice(-3000)}`);
    const points = readPoints(out);
    const failedChecks = (
      (run.summary as { checks?: { name: string; passes: number; fails: number }[] } | undefined)?.checks ??
      []
    )
      .filter((c) => c.fails > 0)
      .map((c) => `${c.name}: ${c.fails} of ${c.passes + c.fails} failed`);
    const scriptErrors = run.stderr
      .split("\n")
      .filter((l) => l.includes(" threw: "))
      .slice(0, 5);
    return {
      points,
      windows: holds(points, scenario, levels, WARMUP_SECONDS, RAMP_SECONDS, HOLD_S),
      run,
      failedChecks,
      scriptErrors,
    };
  };
  const report: Record<string, unknown> = {};
  const loadFrom = Date.now();
  try {
    report.settledBeforeApproversMs = await settle(sampler);
    // Approvers: people deciding at once.
    const approvers = await phase(
      "approvers.js",
      { KNEE_APPROVERS: APPROVERS.join(",") },
      APPROVERS,
      "approvers",
    );
    report.approvers = levelsOf(approvers, sampler, (pts, w) => {
      const f = {
        approvers: w.level,
        batchesPerS: r1(valuesIn(pts, "batch_applied", w).length / HOLD_S),
        inboxP95: r1(percentile(valuesIn(pts, "inbox_duration", w), 95)),
        detailP95: r1(percentile(valuesIn(pts, "detail_duration", w), 95)),
        approveBatchP95: r1(percentile(valuesIn(pts, "approve_batch_duration", w), 95)),
        approveToAppliedP50: r1(percentile(valuesIn(pts, "approve_to_applied", w), 50)),
        approveToAppliedP99: r1(percentile(valuesIn(pts, "approve_to_applied", w), 99)),
        approveToAppliedN: valuesIn(pts, "approve_to_applied", w).length,
        appliedRate: r1(100 * rate(valuesIn(pts, "batch_applied", w))),
        executeCodeP99: r1(percentile(valuesIn(pts, "execute_code_duration", w), 99)),
      };
      const broken = [
        ...(f.inboxP95 > SLO.inboxP95 ? [`inbox p95 ${f.inboxP95} ms > ${SLO.inboxP95}`] : []),
        ...(f.detailP95 > SLO.detailP95 ? [`detail p95 ${f.detailP95} ms > ${SLO.detailP95}`] : []),
        ...(f.approveBatchP95 > SLO.approveBatchP95
          ? [`approve-batch p95 ${f.approveBatchP95} ms > ${SLO.approveBatchP95}`]
          : []),
        ...(f.approveToAppliedP99 > SLO.approveToAppliedP99
          ? [`approve → applied p99 ${f.approveToAppliedP99} ms > ${SLO.approveToAppliedP99}`]
          : []),
        ...(!(f.appliedRate >= 99) ? [`batches applied ${f.appliedRate}% < 99%`] : []),
      ];
      return { f, broken };
    });
    report.settledBeforeWebMs = await settle(sampler);
    // Web sessions: streams held at once.
    const web = await phase("web-sessions.js", { KNEE_SESSIONS: SESSIONS.join(",") }, SESSIONS, "sessions");
    report.webSessions = levelsOf(web, sampler, (pts, w) => {
      const f = {
        sessions: w.level,
        pageLoadP95: r1(percentile(valuesIn(pts, "page_load_duration", w), 95)),
        sseHeldRate: r1(100 * rate(valuesIn(pts, "sse_held", w))),
        streamsEnded: valuesIn(pts, "sse_held", w).length,
        apiFailedRate: r1(
          100 *
            rate(
              pts
                .filter(
                  (p) =>
                    p.metric === "http_req_failed" &&
                    p.tags.kind === "api" &&
                    p.time >= w.from &&
                    p.time < w.to,
                )
                .map((p) => p.value),
            ),
        ),
      };
      const broken = [
        ...(f.pageLoadP95 > SLO.pageLoadP95
          ? [`page load p95 ${f.pageLoadP95} ms > ${SLO.pageLoadP95}`]
          : []),
        ...(f.streamsEnded > 0 && !(f.sseHeldRate >= 99) ? [`streams held ${f.sseHeldRate}% < 99%`] : []),
        ...(f.apiFailedRate >= 1 ? [`API failures ${f.apiFailedRate}%`] : []),
      ];
      return { f, broken };
    });
    report.settledBeforeAgentsMs = await settle(sampler);
    // Agents: snippets per second.
    const agents = await phase(
      "agents.js",
      {
        ...agentsOwnInbox,
        KNEE_RATES: RATES.join(","),
        AGENT_WORKSPACES: process.env.AGENT_WORKSPACES ?? "8",
        AGENT_MAX_VUS: "64",
      },
      RATES,
      "agents",
    );
    report.agents = levelsOf(agents, sampler, (pts, w) => {
      const d = valuesIn(pts, "execute_code_duration", w);
      const f = {
        offeredPerS: w.level,
        donePerS: r1(d.length / HOLD_S),
        p50: r1(percentile(d, 50)),
        p95: r1(percentile(d, 95)),
        p99: r1(percentile(d, 99)),
        okRate: r1(100 * rate(valuesIn(pts, "execute_code_ok", w))),
        dropped: valuesIn(pts, "dropped_iterations", w).length,
      };
      const broken = [
        ...(f.p99 > SLO.executeCodeP99 ? [`execute_code p99 ${f.p99} ms > ${SLO.executeCodeP99}`] : []),
        ...(!(f.okRate >= 99) ? [`execute_code ok ${f.okRate}% < 99%`] : []),
        ...(f.dropped > 0.01 * w.level * HOLD_S
          ? [`${f.dropped} snippets dropped (more than 1%: no free VU)`]
          : []),
      ];
      return { f, broken };
    });
    log("observation append: 2,000 appends to a fresh embedded store");
    const appends = await observationAppendMs(2000);
    report.observationAppend = {
      what: "EventStore.append of one observation-sized event, SQLite (gatehouse dev's store), exact expected revision",
      n: appends.length,
      p50: r1(percentile(appends, 50)),
      p99: r1(percentile(appends, 99)),
      max: r1(Math.max(...appends)),
    };
  } finally {
    sampler.stop();
    log("stopping gatehouse dev (its CPU profile is written on exit)");
    await stopKeepingProfile(dev, profDir, report, loadFrom);
    rmSync(work, { recursive: true, force: true });
  }
  const result = {
    startedAt: new Date(loadFrom).toISOString(),
    at: new Date().toISOString(),
    commit: gitCommit(),
    machine: {
      cpus: cpus().length,
      model: cpus()[0]?.model ?? "",
      node: process.version,
      loadAverage: { before: loadBefore, after: loadavg().map((x) => r1(x)) },
    },
    sandbox: dev.sandbox,
    holdSeconds: HOLD_S,
    slo: SLO,
    ...report,
  };
  writeFileSync(join(outDir, "loadtest.json"), `${JSON.stringify(result, null, 2)}\n`);
  writeFileSync(
    join(outDir, "loadtest.md"),
    `${["approvers", "webSessions", "agents"].map((k) => phaseMarkdown(k, (result as Record<string, unknown>)[k] as Parameters<typeof phaseMarkdown>[1])).join("\n\n")}\n`,
  );
  printReport(result as unknown as Record<string, unknown>);
  log(`written ${join(outDir, "loadtest.json")} and loadtest.md (the per-level tables)`);
}

/**
 * Waits until the previous phase's after-effects are over — the Gatehouse processes (gatehouse dev, the
 * Temporal dev server, the sandboxes) together below 20% of a core for 3 s in a row — at most 90 s;
 * returns how long it waited (ms).
 */
async function settle(sampler: CpuSampler): Promise<number> {
  const began = Date.now();
  log("waiting for the previous phase's work to settle");
  while (Date.now() - began < 90_000) {
    await new Promise((r) => setTimeout(r, 1000));
    const last = sampler.points.slice(-3);
    const busy = (p: (typeof last)[number]) =>
      Object.entries(p.processes)
        .filter(([k]) => k !== "test harness")
        .reduce((sum, [, v]) => sum + v, 0);
    if (last.length === 3 && last.every((p) => busy(p) < 20)) break;
  }
  return Date.now() - began;
}

/** Figures per level, then the sustained level, the knee and the busiest process at the knee. */
function levelsOf(
  {
    points,
    windows,
    failedChecks,
    scriptErrors,
  }: { points: Point[]; windows: Window[]; failedChecks: string[]; scriptErrors: string[] },
  sampler: CpuSampler,
  judge: (points: Point[], w: Window) => { f: Record<string, number>; broken: string[] },
) {
  const levels: Level[] = windows.map((w) => {
    const { f, broken } = judge(points, w);
    return { level: w.level, figures: f, broken, cpu: sampler.mean(w.from, w.to) };
  });
  const kneeAt = levels.findIndex((l) => l.broken.length > 0);
  const knee = kneeAt >= 0 ? levels[kneeAt] : undefined;
  const sustained = kneeAt === 0 ? undefined : levels[(kneeAt >= 0 ? kneeAt : levels.length) - 1];
  const at = knee ?? levels[levels.length - 1];
  const busiest = at ? Object.entries(at.cpu.processes).sort((a, b) => b[1] - a[1])[0] : undefined;
  return {
    levels,
    sustained: sustained?.level ?? null,
    knee: knee?.level ?? null,
    kneeBroke: knee?.broken ?? [],
    busiestAtKnee: busiest ? { process: busiest[0], cpuPercentOfOneCore: busiest[1] } : null,
    failedChecks,
    scriptErrors,
  };
}

/** Stops gatehouse dev and attributes its main thread's profile (the largest .cpuprofile). */
async function stopKeepingProfile(
  dev: Awaited<ReturnType<typeof startGatehouseDev>>,
  dir: string,
  report: Record<string, unknown>,
  loadFrom: number,
) {
  const loadTo = Date.now();
  await dev.stop();
  const exitedAt = Date.now();
  try {
    const files = readdirSync(dir).filter((f) => f.endsWith(".cpuprofile"));
    const main = files
      .map((f) => ({ f, a: attributeProfile(join(dir, f), { from: loadFrom, to: loadTo, exitedAt }) }))
      .sort((a, b) => b.a.totalMs - a.a.totalMs)[0];
    if (main) {
      copyFileSync(
        join(dir, main.f),
        join(ROOT, "bench-results", "loadtest-samples", "gatehouse-dev.cpuprofile"),
      );
      report.devProfile = {
        note: "main thread of gatehouse dev while the scenarios ran (start-up and idle excluded)",
        ...main.a,
        byOwner: main.a.byOwner.slice(0, 15),
        byService: main.a.byService.slice(0, 12),
        topFunctions: main.a.topFunctions.slice(0, 12),
      };
    }
  } catch (err) {
    report.devProfile = { error: `no CPU profile: ${(err as Error).message}` };
  }
}

function gitCommit(): string {
  try {
    return execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
  } catch {
    return "";
  }
}

function printReport(r: Record<string, unknown>) {
  const m = r.machine as { cpus: number; loadAverage: { before: number[]; after: number[] } };
  console.log(
    `\nnpm run loadtest — ${r.at}, commit ${r.commit}, ${m.cpus} cores, load ${m.loadAverage.before[0]} → ${m.loadAverage.after[0]}, sandbox ${r.sandbox}, ${r.holdSeconds} s per level`,
  );
  for (const key of ["agents", "approvers", "webSessions"]) {
    const p = r[key] as ReturnType<typeof levelsOf> | undefined;
    if (!p) continue;
    console.log(
      `\n## ${key}: sustained ${p.sustained ?? "none"}, knee ${p.knee ?? "not reached"}${p.kneeBroke.length ? ` (${p.kneeBroke.join("; ")})` : ""}`,
    );
    for (const l of p.levels) {
      const cpu = Object.entries(l.cpu.processes)
        .sort((a, b) => b[1] - a[1])
        .slice(0, 4)
        .map(([k, v]) => `${k} ${v}%`)
        .join(", ");
      console.log(
        `  ${l.broken.length ? "✗" : "✓"} ${JSON.stringify(l.figures)}  load ${l.cpu.load1}  cpu: ${cpu}  dev threads: ${JSON.stringify(l.cpu.devThreads)}`,
      );
    }
    console.log(`  busiest process at the knee: ${JSON.stringify(p.busiestAtKnee)}`);
    if (p.failedChecks.length) console.log(`  failed checks (whole phase): ${p.failedChecks.join("; ")}`);
    for (const e of p.scriptErrors) console.log(`  ${e}`);
  }
  const oa = r.observationAppend as { p50: number; p99: number; n: number } | undefined;
  if (oa)
    console.log(`\n## observation append (direct, ${oa.n} appends): p50 ${oa.p50} ms, p99 ${oa.p99} ms`);
  const prof = r.devProfile as
    | { totalMs?: number; byService?: [string, number][]; byOwner?: [string, number][] }
    | undefined;
  if (prof?.byService) {
    console.log(`\n## gatehouse dev main thread CPU profile (${prof.totalMs} ms busy)`);
    console.log(
      `  by the Gatehouse frame that asked: ${prof.byService.map(([k, v]) => `${k} ${v} ms`).join(", ")}`,
    );
    console.log(`  by the running code: ${(prof.byOwner ?? []).map(([k, v]) => `${k} ${v} ms`).join(", ")}`);
    console.log(
      `  hottest functions: ${((prof as { topFunctions?: [string, number][] }).topFunctions ?? []).map(([k, v]) => `${k} ${v} ms`).join(", ")}`,
    );
  }
}

main().then(
  () => process.exit(0),
  (err) => {
    console.error(err);
    process.exit(1);
  },
);
