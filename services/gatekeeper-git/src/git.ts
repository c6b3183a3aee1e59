/**
 * Runs the git CLI with execFile (never a shell), against one repository's git dir. Every call
 * passes `--literal-pathspecs` so a path is never a pattern. `gitTrace` lets tests see every
 * argument list run (to prove a refused path never reached git).
 */
import { execFile } from "node:child_process";

/** Test hook: called with the argument list of every git run. */
export const gitTrace: { listener: ((args: readonly string[]) => void) | null } = { listener: null };

/** Failure of a git run: exit code and stderr (for logs only; never shown to callers). */
export class GitFailed extends Error {
  override name = "GitFailed";
  constructor(
    readonly args: readonly string[],
    readonly exitCode: number | null,
    readonly stderr: string,
  ) {
    super(`git ${args[0] ?? ""} failed (exit ${exitCode})`);
  }
}

/** Options of one run. */
export interface GitRunOptions {
  /** Bytes written to stdin. */
  input?: string | Buffer;
  /** Extra environment (e.g. GIT_INDEX_FILE). */
  env?: Record<string, string>;
  /** Exit codes treated as success (default [0]). */
  okCodes?: number[];
  /** Largest stdout accepted, bytes (default 256 MiB). */
  maxBuffer?: number;
  /** Kill the run after this many milliseconds (default: no limit). Remote operations set it. */
  timeoutMs?: number;
}

const BASE_ENV: Record<string, string> = {
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_TERMINAL_PROMPT: "0",
  GIT_AUTHOR_NAME: "Gatehouse agent",
  GIT_AUTHOR_EMAIL: "agent@gatehouse.invalid",
  GIT_COMMITTER_NAME: "Gatehouse gatekeeper",
  GIT_COMMITTER_EMAIL: "gatekeeper@gatehouse.invalid",
  LC_ALL: "C",
};

/** Runs `git --git-dir=<gitDir> --literal-pathspecs <args>` (no --git-dir when ""); resolves stdout. */
export function git(gitDir: string, args: readonly string[], opts: GitRunOptions = {}): Promise<Buffer> {
  gitTrace.listener?.(args);
  const full = [...(gitDir ? [`--git-dir=${gitDir}`] : []), "--literal-pathspecs", ...args];
  return new Promise((resolve, reject) => {
    const child = execFile(
      "git",
      full,
      {
        encoding: "buffer",
        maxBuffer: opts.maxBuffer ?? 256 * 1024 * 1024,
        ...(opts.timeoutMs !== undefined ? { timeout: opts.timeoutMs, killSignal: "SIGKILL" as const } : {}),
        env: {
          PATH: process.env.PATH ?? "/usr/bin:/bin",
          HOME: process.env.HOME ?? "/",
          ...BASE_ENV,
          ...opts.env,
        },
      },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === "number" ? err.code : null) : 0;
        if (code !== null && (opts.okCodes ?? [0]).includes(code)) resolve(stdout);
        else reject(new GitFailed(args, code, stderr.toString("utf8").slice(0, 2000)));
      },
    );
    if (opts.input !== undefined) child.stdin?.end(opts.input);
    else child.stdin?.end();
  });
}

/** `git` with stdout as trimmed UTF-8 text. */
export async function gitText(
  gitDir: string,
  args: readonly string[],
  opts?: GitRunOptions,
): Promise<string> {
  return (await git(gitDir, args, opts)).toString("utf8").trim();
}
