/**
 * The git part of `npm run bench`: one `readFile` through gatekeeper-git over the whole path
 * (sandbox → kernel relay → gatekeeper → git, observation appended) as (T_K − T_0) / K, next to
 * `git show main:<path>` spawned here on the same repository; and the overlay cost: `listFiles`
 * in a workspace with N pending commits next to one with none.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import type { ExecuteResult, KernelClient } from "@gatehouse/proto";
import { log, median, type Row, returned, round, unary } from "./support.ts";

/** Raw samples, ms: whole-snippet times for K reads (and K = 0), and per-call `git show` times. */
export interface GitSamples {
  read: number[];
  listNone: number[];
  listPending: number[];
  zero: number[];
  gitShow: number[];
}

/** How much to measure: K reads per snippet, pending commits, repetitions. */
export interface GitBenchConfig {
  reads: number;
  pending: number;
  reps: number;
}

/** A bare repository `bench.git` under `reposDir` with 200 files of ~4 KB under src/ plus a README. */
function seedGitRepo(reposDir: string, work: string): string {
  const src = join(work, "git-src");
  mkdirSync(join(src, "src"), { recursive: true });
  const git = (cwd: string, ...args: string[]) =>
    execFileSync("git", args, {
      cwd,
      env: {
        ...process.env,
        GIT_AUTHOR_NAME: "bench",
        GIT_AUTHOR_EMAIL: "b@x.invalid",
        GIT_COMMITTER_NAME: "bench",
        GIT_COMMITTER_EMAIL: "b@x.invalid",
      },
    });
  git(src, "init", "-q", "-b", "main");
  writeFileSync(join(src, "README.md"), "bench\n");
  for (let i = 0; i < 200; i++) {
    const body = Array.from(
      { length: 100 },
      (_, l) => `export const v${l} = ${i * 1000 + l}; // line ${l}`,
    ).join("\n");
    writeFileSync(join(src, "src", `file-${String(i).padStart(3, "0")}.ts`), `${body}\n`);
  }
  git(src, "add", "-A");
  git(src, "commit", "-q", "-m", "seed");
  mkdirSync(reposDir, { recursive: true });
  const bare = join(reposDir, "bench.git");
  git(reposDir, "clone", "-q", "--bare", src, bare);
  return bare;
}

/** Takes the samples on a running dev stack (its git gatekeeper serves `reposDir`). */
export async function sampleGit(
  opts: GitBenchConfig & {
    kernel: KernelClient;
    exec: (workspaceId: string, code: string, wallTimeMs?: number) => Promise<ExecuteResult>;
    reposDir: string;
    work: string;
  },
): Promise<GitSamples> {
  const { kernel, exec, reads, pending, reps } = opts;
  const samples: GitSamples = { read: [], listNone: [], listPending: [], zero: [], gitShow: [] };
  const repoDir = seedGitRepo(opts.reposDir, opts.work);
  const gitUrl = `git+file://${repoDir}`;
  const wsGit = (
    await unary(kernel, kernel.createWorkspace, { name: "bench-git", owner: "user:bench", members: [] })
  ).id;
  const wsPending = (
    await unary(kernel, kernel.createWorkspace, {
      name: "bench-git-pending",
      owner: "user:bench",
      members: [],
    })
  ).id;
  for (const ws of [wsGit, wsPending]) {
    await unary(kernel, kernel.introduceResource, { workspaceId: ws, url: gitUrl, name: "REPO" });
  }
  const loop = (k: number, call: string) => `export default async (env: any) => {
  let n = 0;
  for (let i = 0; i < ${k}; i++) n += ${call};
  return n;
}`;
  const readCall = `(await env.REPO.readFile({ path: "src/file-007.ts" })).length`;
  const listCall = "(await env.REPO.listFiles({})).files.length";
  log(`git commits: ${pending} pending commits in one workspace`);
  returned(
    await exec(
      wsPending,
      `export default async (env: any) => {
  for (let i = 0; i < ${pending}; i++)
    await env.REPO.commit({ branch: "main", message: "pending " + i, changes: [{ path: "src/file-" + String(i % 200).padStart(3, "0") + ".ts", content: "// pending " + i + "\\n" }] });
  return 1;
}`,
      300_000,
    ),
  );
  log(
    `git via gatekeeper: ${reps} reps of K=${reads} readFile / listFiles (none vs ${pending} pending) and K=0`,
  );
  for (const ws of [wsGit, wsPending]) returned(await exec(ws, loop(2, listCall)));
  const timed = async (ws: string, code: string) => {
    const began = performance.now();
    returned(await exec(ws, code, 300_000));
    return performance.now() - began;
  };
  for (let r = 0; r < reps; r++) {
    // Interleaved so drift hits every side alike.
    samples.read.push(await timed(wsGit, loop(reads, readCall)));
    samples.listNone.push(await timed(wsGit, loop(reads, listCall)));
    samples.listPending.push(await timed(wsPending, loop(reads, listCall)));
    samples.zero.push(await timed(wsGit, loop(0, "0")));
  }
  for (let r = 0; r < reps; r++) {
    const began = performance.now();
    for (let i = 0; i < reads; i++)
      execFileSync("git", [`--git-dir=${repoDir}`, "show", "main:src/file-007.ts"]);
    samples.gitShow.push((performance.now() - began) / reads);
  }
  return samples;
}

/** The table rows (read vs `git show`, pending vs none) and the raw detail for the JSON. */
export function gitRows(samples: GitSamples, config: GitBenchConfig): { rows: Row[]; detail: object } {
  const per = (xs: number[]) => (median(xs) - median(samples.zero)) / config.reads;
  const read = per(samples.read);
  const show = median(samples.gitShow);
  const none = per(samples.listNone);
  const pending = per(samples.listPending);
  return {
    detail: { k: config.reads, reps: config.reps, pendingCommits: config.pending, samplesMs: samples },
    rows: [
      {
        id: "git.readFile",
        measurement: "git readFile via gatekeeper, (med T_K - med T_0)/K",
        value: round(read, 3),
        baseline: "git show main:<path> (process spawn) median",
        baselineValue: round(show, 3),
        unit: "ms",
        ratio: read / show,
      },
      {
        id: "git.overlay",
        measurement: `git listFiles (201 files) with ${config.pending} pending commits`,
        value: round(pending, 3),
        baseline: "same listFiles with none pending",
        baselineValue: round(none, 3),
        unit: "ms",
        ratio: pending / none,
      },
    ],
  };
}
