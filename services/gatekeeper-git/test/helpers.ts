import assert from "node:assert/strict";
/**
 * Test helpers: real git repositories made with the git CLI in temp dirs, a FAKE recording
 * ApprovalQueue on loopback (it stands in for services/approval, which a service may not import),
 * and a running gatekeeper-git with a client.
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { connectSession, readApplyOutcome } from "@gatehouse/gatekeeper-kit";
import { FakeApprovalQueue } from "@gatehouse/gatekeeper-kit/testing";
import { type ApplyActionResponse, GatekeeperClient } from "@gatehouse/proto";
import { credentials } from "@grpc/grpc-js";
import { pino } from "pino";
import {
  createRemotes,
  type GitGatekeeper,
  type Limits,
  type RemoteRule,
  startGitGatekeeper,
} from "../src/index.ts";

export function sh(cwd: string, ...args: string[]): string {
  return execFileSync("git", args, {
    cwd,
    encoding: "utf8",
    env: {
      ...process.env,
      GIT_AUTHOR_NAME: "Test",
      GIT_AUTHOR_EMAIL: "t@example.invalid",
      GIT_COMMITTER_NAME: "Test",
      GIT_COMMITTER_EMAIL: "t@example.invalid",
      GIT_CONFIG_NOSYSTEM: "1",
    },
    maxBuffer: 64 * 1024 * 1024,
  }).trim();
}

/** A temp root with `work/` (a normal repo) and `repo.git` (a bare clone the gatekeeper serves). */
export interface TestRepo {
  root: string;
  work: string;
  bare: string;
  url: string;
  /** Writes files (and symlinks: value {link: target}) in work/, commits, pushes main to repo.git. */
  commitAndPush(files: Record<string, string | { link: string } | null>, message?: string): string;
  /** Content of `path` on `ref` in repo.git. */
  show(ref: string, path: string): string;
  /** Subjects of `ref` in repo.git, newest first. */
  subjects(ref?: string): string[];
  cleanup(): void;
}

export function makeRepo(files: Record<string, string | { link: string }>): TestRepo {
  const root = realpathSync(mkdtempSync(join(tmpdir(), "gk-git-test-")));
  const work = join(root, "work");
  const bare = join(root, "repo.git");
  mkdirSync(work);
  sh(work, "init", "-q", "-b", "main");
  const write = (fs: Record<string, string | { link: string } | null>) => {
    for (const [p, v] of Object.entries(fs)) {
      const abs = join(work, p);
      if (v === null) {
        sh(work, "rm", "-q", "--", p);
        continue;
      }
      mkdirSync(dirname(abs), { recursive: true });
      if (typeof v === "string") writeFileSync(abs, v);
      else symlinkSync(v.link, abs);
    }
    sh(work, "add", "-A");
  };
  write(files);
  sh(work, "commit", "-q", "-m", "initial");
  sh(root, "clone", "-q", "--bare", work, bare);
  return {
    root,
    work,
    bare,
    url: `git+file://${bare}`,
    commitAndPush(fs, message = "change") {
      sh(work, "fetch", "-q", bare, "main");
      sh(work, "reset", "-q", "--hard", "FETCH_HEAD");
      write(fs);
      sh(work, "commit", "-q", "-m", message);
      sh(work, "push", "-q", bare, "main");
      return sh(work, "rev-parse", "HEAD");
    },
    show: (ref, path) => sh(bare, "show", `${ref}:${path}`),
    subjects: (ref = "main") => sh(bare, "log", "--format=%s", ref).split("\n"),
    cleanup: () => rmSync(root, { recursive: true, force: true }),
  };
}

export { FakeApprovalQueue };

/** The methods of a git binding as a test calls them. */
export interface RepoApi {
  listFiles(args?: unknown): Promise<{ files: string[]; page: number; more: boolean }>;
  readFile(args: unknown): Promise<string>;
  log(
    args?: unknown,
  ): Promise<{ commits: { id: string; message: string; pending: boolean }[]; more: boolean }>;
  commit(args: unknown): Promise<{ id: string; branch: string; pending: true }>;
  createBranch(args: unknown): Promise<{ id: string; branch: string; pending: true }>;
  push(args: unknown): Promise<{ id: string; branch: string; pending: true }>;
  readFilePage(args: unknown): Promise<{ content: string; page: number; more: boolean; totalBytes: number }>;
  diff(args: unknown): Promise<{
    files: { path: string; status: string; patch: string; complete: boolean }[];
    page: number;
    more: boolean;
  }>;
  grep(args: unknown): Promise<{ matches: { path: string; line: number; text: string }[]; more: boolean }>;
}

/** A running gatekeeper over `root`, its fake approval queue and a gRPC client. */
export interface Harness {
  gk: GitGatekeeper;
  approval: FakeApprovalQueue;
  client: GatekeeperClient;
  open(url: string, binding?: string): { repo: RepoApi; close(): void };
  apply(url: string, localId: string, binding?: string): Promise<ApplyActionResponse>;
  reject(localId: string, binding?: string): Promise<void>;
  /** Stops the gatekeeper (its in-memory state is gone) and starts a new one on the same approval queue. */
  restart(): Promise<void>;
  close(): Promise<void>;
}

/** Extra gatekeeper options of a harness. */
export interface HarnessExtras {
  remotes?: RemoteRule[];
  cacheDir?: string;
  fetchIntervalMs?: number;
}

export async function startHarness(
  allowedRoots: string[],
  limits?: Partial<Limits>,
  extras: HarnessExtras = {},
): Promise<Harness> {
  const approval = await new FakeApprovalQueue().start();
  const startGk = () =>
    startGitGatekeeper({
      allowedRoots,
      ...extras,
      approvalAddress: `127.0.0.1:${approval.port}`,
      host: "127.0.0.1",
      port: 0,
      ...(limits ? { limits } : {}),
      logger: pino({ level: process.env.TEST_LOG ?? "silent" }),
    });
  const sessions: { close(): void }[] = [];
  const results = new Map<string, string>();
  const gk = await startGk();
  const h: Harness = {
    gk,
    approval,
    client: new GatekeeperClient(`127.0.0.1:${gk.port}`, credentials.createInsecure()),
    open(url, binding = "REPO") {
      const s = connectSession<RepoApi & Record<string, never>>(h.client.openSession(), {
        workspaceId: "ws-1",
        binding,
        url,
        trust: "byo",
        callerToken: "token-1",
        executionId: "exec-1",
      });
      sessions.push(s);
      return { repo: s.stub as unknown as RepoApi, close: () => s.close() };
    },
    async apply(url, localId, binding = "REPO") {
      const sub = approval.submissions.find((s) => s.localId === localId);
      if (!sub) throw new Error(`no submission ${localId}`);
      const res = await readApplyOutcome(
        h.client.applyAction({
          workspaceId: "ws-1",
          binding,
          url,
          trust: "byo",
          actionId: sub.actionId,
          localId,
          payloadJson: sub.payloadJson,
          // As the worker does: the results of applied dependencies, by local id.
          dependencyResults: Object.fromEntries(
            sub.description.dependsOn.flatMap((l) => (results.has(l) ? [[l, results.get(l)!]] : [])),
          ),
        }),
      );
      approval.settled.add(sub.actionId);
      if (res.ok) {
        results.set(localId, res.resultJson);
        approval.results.set(sub.actionId, res.resultJson); // as the stream records ActionApplied
      }
      return res;
    },
    reject(localId, binding = "REPO") {
      const sub = approval.submissions.find((s) => s.localId === localId);
      if (sub) approval.settled.add(sub.actionId);
      return new Promise((res, rej) =>
        h.client.actionRejected(
          { workspaceId: "ws-1", binding, actionId: sub?.actionId ?? 0, localId },
          (e) => (e ? rej(e) : res()),
        ),
      );
    },
    async restart() {
      for (const s of sessions.splice(0)) s.close();
      h.client.close();
      await h.gk.close();
      h.gk = await startGk();
      h.client = new GatekeeperClient(`127.0.0.1:${h.gk.port}`, credentials.createInsecure());
    },
    async close() {
      for (const s of sessions) s.close();
      h.client.close();
      await h.gk.close();
      approval.close();
    },
  };
  return h;
}

/** assert.rejects for capnweb RpcPromises (thenables, not Promises). */
export function rejects(p: PromiseLike<unknown>, re: RegExp): Promise<void> {
  return assert.rejects((async () => await p)(), re);
}

/**
 * A harness whose gatekeeper may reach `remoteUrl` (an HTTP remote prefix, e.g. a git http-backend
 * server or a proxy in front of it) as user "bot" with `token` (written to `<root>/token`), caching
 * clones under `<root>/cache` and never fetching in the background. The binding URL of the served
 * `repo.git` is `git+<remoteUrl>repo.git`.
 */
export function startHarnessWithRemote(root: string, remoteUrl: string, token: string): Promise<Harness> {
  writeFileSync(join(root, "token"), `${token}\n`);
  return startHarness([root], undefined, {
    remotes: createRemotes({
      remotes: [{ url: remoteUrl, username: "bot", tokenFile: join(root, "token") }],
    }),
    cacheDir: join(root, "cache"),
    fetchIntervalMs: 0,
  });
}
