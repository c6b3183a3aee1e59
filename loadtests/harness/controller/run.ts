/**
 * One test run of a k6 script on the harness, in k6's order: the init context (a VU that reports
 * options, exported functions and metrics), the options and thresholds checked, every scenario's
 * initial VUs started, setup() (its result, as JSON, handed to every VU), the scenarios on their
 * start times, teardown(data), then the thresholds evaluated over every sample and the summary.
 * A script error in init or setup stops the run (exit 107); an option or API the harness lacks stops it
 * too (exit 104), naming it; a failed threshold makes exit code 99.
 */
import { createWriteStream, type WriteStream } from "node:fs";
import { performance } from "node:perf_hooks";
import { pathToFileURL } from "node:url";
import { HarnessConfigError, ScriptError } from "./errors.ts";
import { type ExecutorContext, runExecutor } from "./executors/index.ts";
import { Registry, type Sample } from "./metrics.ts";
import { initialVUs, parseOptions, type Scenario } from "./options.ts";
import { type CheckCount, type SummaryInput, summaryJson, summaryText } from "./summary.ts";
import { evaluateThresholds, parseThresholds, type ThresholdResult } from "./thresholds.ts";
import { InitError, type Outcome, VuHost } from "./vu-host.ts";

/** How to run. */
export interface RunConfig {
  /** Path of the k6 script. */
  script: string;
  /** __ENV (k6 run passes the process environment plus every -e NAME=value). */
  env: Record<string, string>;
  /** Writes every sample as a JSON line (k6's `--out json=<file>` format: {"type":"Point",...}). */
  outJson?: string;
  /** Where progress and script errors go (default stderr). */
  log?: (line: string) => void;
}

/** What the run came to. */
export interface RunResult {
  exitCode: number;
  thresholds: ThresholdResult[];
  summary: SummaryInput;
  text: string;
  json: unknown;
}

/** Runs `config.script`. @throws HarnessConfigError, ScriptError (with their exit codes). */
export async function runScript(config: RunConfig): Promise<RunResult> {
  const log = config.log ?? ((l: string) => process.stderr.write(`${l}\n`));
  const scriptUrl = pathToFileURL(config.script).href;
  let registry: Registry | undefined;
  const early: Sample[] = [];
  const checks = new Map<string, CheckCount>();
  let out: WriteStream | undefined;
  const ingest = (samples: Sample[]) => {
    for (const s of samples) {
      if (!registry) {
        early.push(s);
        continue;
      }
      registry.add(s);
      if (s.metric === "checks") {
        const key = `${s.tags.group ?? ""}\0${s.tags.check}`;
        const c = checks.get(key) ?? {
          group: s.tags.group ?? "",
          name: s.tags.check ?? "",
          passes: 0,
          fails: 0,
        };
        if (s.value) c.passes++;
        else c.fails++;
        checks.set(key, c);
      }
      out?.write(
        `${JSON.stringify({ type: "Point", metric: s.metric, data: { time: new Date(s.time).toISOString(), value: s.value, tags: s.tags } })}\n`,
      );
    }
  };

  const vus: VuHost[] = [];
  let nextId = 1;
  const start = async (id: number) => {
    try {
      const vu = await VuHost.start(id, scriptUrl, config.env, ingest);
      vus.push(vu);
      return vu;
    } catch (err) {
      if (err instanceof InitError)
        throw err.unsupported
          ? new HarnessConfigError(err.message)
          : new ScriptError(`the script's init context failed: ${err.message}`);
      throw err;
    }
  };

  try {
    const initVu = await start(0);
    const ready = initVu.ready;
    registry = new Registry(ready.metrics);
    const options = parseOptions(ready.options, new Set(ready.exports));
    const thresholds = parseThresholds(options.thresholds, registry);
    if (config.outJson) out = createWriteStream(config.outJson);
    ingest(early.splice(0));

    // Initial VUs, before setup, as k6 does; a few at a time (each is a thread with its own isolate).
    const plan = [...options.scenarios].sort((a, b) => a.startTimeMs - b.startTimeMs);
    const pre = new Map<string, VuHost[]>();
    for (const s of plan) {
      const ids = Array.from({ length: initialVUs(s) }, () => nextId++);
      const got: VuHost[] = [];
      for (let i = 0; i < ids.length; i += 8)
        got.push(...(await Promise.all(ids.slice(i, i + 8).map(start))));
      pre.set(s.name, got);
    }
    log(
      `harness: ${vus.length - 1} VUs ready for ${plan.map((s) => `${s.name} (${s.executor})`).join(", ")}`,
    );

    const globalTags = options.tags;
    const runCommand = async (
      vu: VuHost,
      kind: "setup" | "teardown",
      exec: string,
      timeoutMs: number,
      data?: { value: unknown },
    ) => {
      const timer = setTimeout(() => vu.interrupt(), timeoutMs);
      try {
        return await vu.run(
          { kind, exec, iteration: 0, env: {}, tags: { ...globalTags }, group: `::${kind}` },
          data,
        );
      } finally {
        clearTimeout(timer);
      }
    };
    let data: { value: unknown } = { value: undefined };
    if (ready.exports.includes("setup")) {
      const o = await runCommand(initVu, "setup", "setup", options.setupTimeoutMs);
      failOnScriptError(o, "setup()", options.setupTimeoutMs);
      data = { value: o.value };
    }

    let fatal: string | undefined;
    let complete = 0;
    let interrupted = 0;
    let errorsLogged = 0;
    let active = 0;
    const t0 = performance.now();
    const vusTimer = setInterval(() => {
      ingest([
        { metric: "vus", value: active, tags: {}, time: Date.now() },
        { metric: "vus_max", value: vus.length - 1, tags: {}, time: Date.now() },
      ]);
    }, 1000);
    const aborts = new Set<() => void>();
    const sleepUntilAbs = (at: number) =>
      new Promise<void>((resolve) => {
        if (fatal !== undefined) return resolve();
        const done = () => {
          clearTimeout(timer);
          aborts.delete(done);
          resolve();
        };
        const timer = setTimeout(done, Math.max(0, at - performance.now()));
        aborts.add(done);
      });

    const runScenario = async (s: Scenario) => {
      await sleepUntilAbs(t0 + s.startTimeMs);
      const began = performance.now();
      const iterOf = new Map<VuHost, number>();
      const tags = { ...globalTags, ...s.tags, scenario: s.name };
      const ctx: ExecutorContext = {
        scenario: s,
        now: () => performance.now() - began,
        sleepUntil: (ms) => sleepUntilAbs(began + ms),
        aborted: () => fatal !== undefined,
        preallocated: pre.get(s.name) ?? [],
        newVu: () => start(nextId++),
        dropped: () => ingest([{ metric: "dropped_iterations", value: 1, tags, time: Date.now() }]),
        active: (d) => {
          active += d;
        },
        iterate: async (vu, hardStopMs) => {
          const iteration = iterOf.get(vu) ?? 0;
          iterOf.set(vu, iteration + 1);
          const wait = began + hardStopMs - performance.now();
          const timer = setTimeout(() => vu.interrupt(), Math.max(0, wait));
          if (wait <= 0) vu.interrupt();
          const o = await vu.run(
            { kind: "iteration", exec: s.exec, iteration, env: s.env, tags, group: "" },
            data,
          );
          clearTimeout(timer);
          if (o.interrupted) interrupted++;
          else complete++;
          if (!o.ok && !o.interrupted) {
            if (o.unsupported) {
              fatal ??= o.error ?? "unsupported";
              for (const a of [...aborts]) a();
              for (const v of vus) v.interrupt();
            } else if (errorsLogged++ < 20) {
              log(`harness: VU ${vu.id} (${s.name}) iteration ${iteration} threw: ${o.error}`);
            } else if (errorsLogged === 21) log("harness: further script errors are not printed");
          }
        },
      };
      await runExecutor(ctx);
    };
    await Promise.all(plan.map(runScenario));
    const runSeconds = (performance.now() - t0) / 1000;
    clearInterval(vusTimer);
    if (fatal !== undefined) throw new HarnessConfigError(fatal);

    if (ready.exports.includes("teardown")) {
      const o = await runCommand(initVu, "teardown", "teardown", options.teardownTimeoutMs, data);
      if (!o.ok) log(`harness: teardown() ${o.interrupted ? "ran out of time" : `threw: ${o.error}`}`);
    }
    await Promise.all(vus.map((v) => v.close()));
    vus.length = 0;
    await new Promise((r) => setImmediate(r)); // the last sample messages

    const results = evaluateThresholds(thresholds, registry, runSeconds);
    const summary: SummaryInput = {
      registry,
      thresholds: results,
      checks: [...checks.values()],
      runSeconds,
      trendStats: options.summaryTrendStats,
      iterations: { complete, interrupted },
    };
    return {
      exitCode: results.every((r) => r.ok) ? 0 : 99,
      thresholds: results,
      summary,
      text: summaryText(summary),
      json: summaryJson(summary),
    };
  } finally {
    await Promise.all(vus.map((v) => v.close().catch(() => {})));
    await new Promise<void>((r) => (out ? out.end(() => r()) : r()));
  }
}

/** @throws ScriptError / HarnessConfigError when setup() failed. */
function failOnScriptError(o: Outcome, what: string, timeoutMs: number): void {
  if (o.ok) return;
  if (o.unsupported) throw new HarnessConfigError(o.error ?? "unsupported");
  if (o.interrupted)
    throw new ScriptError(`${what} did not finish within ${timeoutMs / 1000}s (setupTimeout)`);
  throw new ScriptError(`${what} threw: ${o.error}`);
}
