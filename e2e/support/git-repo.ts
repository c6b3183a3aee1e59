/** Real git repositories for the cross-service tests, made with the git CLI. */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";

/** Runs git in `cwd` with a fixed test identity; returns trimmed stdout. */
export function git(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "t",
      GIT_AUTHOR_EMAIL: "t@x",
      GIT_COMMITTER_NAME: "t",
      GIT_COMMITTER_EMAIL: "t@x",
    },
  }).trim();
}

/**
 * A bare repository at `bare` (its parent is created) whose main branch has one commit named
 * "initial" holding `files` (path -> content); the work tree is made under `scratchDir`.
 * @returns `bare`.
 */
export function makeBareRepo(scratchDir: string, bare: string, files: Record<string, string>): string {
  const work = mkdtempSync(join(scratchDir, "work-"));
  git(work, "init", "-q", "-b", "main");
  for (const [path, content] of Object.entries(files)) {
    mkdirSync(dirname(join(work, path)), { recursive: true });
    writeFileSync(join(work, path), content);
  }
  git(work, "add", ".");
  git(work, "commit", "-q", "-m", "initial");
  mkdirSync(dirname(bare), { recursive: true });
  git(scratchDir, "clone", "-q", "--bare", work, bare);
  return bare;
}
