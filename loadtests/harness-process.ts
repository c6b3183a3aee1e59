/**
 * Runs one k6 script on the test harness as a child process (harness/cli.ts run), as the smoke test
 * and `npm run loadtest` do, bounded in time; returns its exit code, output and JSON summary.
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";

const CLI = join(import.meta.dirname, "harness/cli.ts");

/** What the run came to. */
export interface HarnessRun {
  code: number | null;
  stdout: string;
  stderr: string;
  /** The --summary-export JSON (undefined when the run stopped before writing it). */
  summary?: {
    iterations: { complete: number; interrupted: number };
    metrics: Record<
      string,
      {
        type: string;
        values: Record<string, number>;
        thresholds: Record<string, { ok: boolean; value: number }>;
      }
    >;
  };
  elapsedMs: number;
}

/**
 * Runs `script` with `env` added to __ENV (as -e flags); kills it after `timeoutMs`. `outJson`: also
 * write every sample there (--out json=). `echo`: copy its output to this process's stderr as it comes.
 * `onStart`: told the child's pid (the full run samples its CPU).
 */
export async function runHarness(
  script: string,
  env: Record<string, string>,
  options: { timeoutMs: number; outJson?: string; echo?: boolean; onStart?: (pid: number) => void },
): Promise<HarnessRun> {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-harness-run-"));
  const summaryFile = join(dir, "summary.json");
  const args = ["--no-node-snapshot", "--import", "tsx", CLI, "run", "--summary-export", summaryFile];
  if (options.outJson) args.push("--out", `json=${options.outJson}`);
  for (const [k, v] of Object.entries(env)) args.push("-e", `${k}=${v}`);
  args.push(script);
  const began = Date.now();
  const child = spawn(process.execPath, args, { stdio: ["ignore", "pipe", "pipe"] });
  if (child.pid !== undefined) options.onStart?.(child.pid);
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d: Buffer) => {
    stdout += d.toString();
    if (options.echo) process.stderr.write(d);
  });
  child.stderr.on("data", (d: Buffer) => {
    stderr += d.toString();
    if (options.echo) process.stderr.write(d);
  });
  const killer = setTimeout(() => child.kill("SIGKILL"), options.timeoutMs);
  const code = await new Promise<number | null>((r) => child.once("exit", (c) => r(c)));
  clearTimeout(killer);
  try {
    const summary = existsSync(summaryFile) ? JSON.parse(readFileSync(summaryFile, "utf8")) : undefined;
    return { code, stdout, stderr, summary, elapsedMs: Date.now() - began };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
