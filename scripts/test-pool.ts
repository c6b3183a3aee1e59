/**
 * Runs jobs (checks and test units) a few at a time, longest first, each in its own process group, and
 * prints each job's whole output as one block when it ends, so the log of a parallel run reads like a
 * sequential one. Ctrl-C or SIGTERM stops every running job's whole process tree (no orphaned stacks).
 */
import { spawn } from "node:child_process";
import { join } from "node:path";

/** A command to run: a check (biome, typecheck…) or a test unit. */
export interface Job {
  name: string;
  /** Working directory, absolute. */
  cwd: string;
  command: string[];
  /** Whether its output is node:test TAP (a test unit) or plain (a check). */
  kind: "check" | "tests";
}

/** How one job ended. `seconds` is its wall time; `lane` the worker (1-based) that ran it. */
export interface JobResult {
  job: Job;
  code: number | null;
  signal: NodeJS.Signals | null;
  output: string;
  seconds: number;
  lane: number;
  /** Seconds from the pool's start to this job's start. */
  startedAt: number;
}

/**
 * Runs `jobs` in order on `lanes` workers; each free worker takes the next job.
 * @param onEnd called once per job when it ends (before the next job starts on that worker)
 * @returns every job's result, in the order they ended
 */
export async function runPool(
  jobs: Job[],
  lanes: number,
  onStart: (job: Job, lane: number) => void,
  onEnd: (result: JobResult) => void,
): Promise<JobResult[]> {
  const queue = [...jobs];
  const results: JobResult[] = [];
  const running = new Set<number>();
  const t0 = performance.now();
  const stopAll = (signal: NodeJS.Signals) => {
    for (const pid of running) {
      try {
        process.kill(-pid, "SIGTERM");
      } catch {
        // already gone
      }
    }
    process.exit(signal === "SIGINT" ? 130 : 143);
  };
  process.once("SIGINT", stopAll);
  process.once("SIGTERM", stopAll);
  const worker = async (lane: number) => {
    for (let job = queue.shift(); job; job = queue.shift()) {
      onStart(job, lane);
      const started = performance.now();
      const r = await run(job, running);
      const result: JobResult = {
        job,
        ...r,
        seconds: (performance.now() - started) / 1000,
        lane,
        startedAt: (started - t0) / 1000,
      };
      results.push(result);
      onEnd(result);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, lanes) }, (_, i) => worker(i + 1)));
  process.off("SIGINT", stopAll);
  process.off("SIGTERM", stopAll);
  return results;
}

function run(
  job: Job,
  running: Set<number>,
): Promise<{ code: number | null; signal: NodeJS.Signals | null; output: string }> {
  return new Promise((resolve) => {
    const chunks: Buffer[] = [];
    const [file, ...args] = job.command as [string, ...string[]];
    const child = spawn(file, args, {
      cwd: job.cwd,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
      env: { ...process.env, PATH: `${join(job.cwd, "node_modules/.bin")}:${process.env.PATH}` },
    });
    if (child.pid) running.add(child.pid);
    child.stdout.on("data", (c: Buffer) => chunks.push(c));
    child.stderr.on("data", (c: Buffer) => chunks.push(c));
    child.on("error", (e) => {
      chunks.push(Buffer.from(`test: could not start ${job.command.join(" ")}: ${e.message}\n`));
    });
    // On exit, whatever the job left running in its group (a server a test forgot, a background process
    // still holding the output pipe) is stopped, so the pipes close and the job ends with its own code.
    let exited: { code: number | null; signal: NodeJS.Signals | null } | undefined;
    child.on("exit", (code, signal) => {
      exited = { code, signal };
      if (child.pid) {
        running.delete(child.pid);
        try {
          process.kill(-child.pid, "SIGKILL");
        } catch {
          // nothing left
        }
      }
    });
    child.on("close", (code, signal) => {
      resolve({ ...(exited ?? { code, signal }), output: Buffer.concat(chunks).toString("utf8") });
    });
  });
}
