/**
 * Split mode: every service runs as its own process from its `main.ts`, configured only by
 * environment variables, sharing one SQLite event store file; the `gatehouse` CLI drives a
 * write → approve → apply cycle across them against the real memory MCP server.
 */
import assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, before, test } from "node:test";
import { promisify } from "node:util";
import { freePort, waitForPort as waitForListening } from "@gatehouse/service-kit";
import { startTemporalDevServer, type TemporalDevServer } from "@gatehouse/temporal-dev";
import { git, makeBareRepo } from "../support/git-repo.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const run = promisify(execFile);

/**
 * Waits for a child process's port; fails at once when the child exits. Six services start at once, so on
 * a busy 2-core machine one can take well over 30 s: the deadline is generous.
 */
function waitForPort(port: number, child: ChildProcess, name: string, timeoutMs = 120_000): Promise<void> {
  return waitForListening(port, {
    name,
    timeoutMs,
    stillRunning: () => (child.exitCode !== null ? `${name} exited with ${child.exitCode}` : undefined),
  });
}

const dir = mkdtempSync(join(tmpdir(), "gatehouse-split-"));
const children: ChildProcess[] = [];
const logs = new Map<string, string>();
let env: NodeJS.ProcessEnv;
let temporal: TemporalDevServer | undefined;
let opsPorts: Record<string, number> = {};

function service(name: string, entry: string, vars: Record<string, string>): ChildProcess {
  const child = spawn(process.execPath, ["--no-node-snapshot", "--import", "tsx", entry], {
    cwd: ROOT,
    env: { ...process.env, LOG_LEVEL: "warn", ...vars },
    stdio: ["ignore", "pipe", "pipe"],
  });
  logs.set(name, "");
  const keep = (d: Buffer) => logs.set(name, (logs.get(name) ?? "") + d.toString());
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  children.push(child);
  return child;
}

before(async () => {
  const ports = await Promise.all([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11].map(() => freePort()));
  const [kernel, approval, mcp, runner, m1, m2, m3, m4] = ports as [
    number,
    number,
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const m5 = ports[8] as number;
  const gitPort = ports[9] as number;
  const m6 = ports[10] as number;
  opsPorts = {
    "gatekeeper-mcp": m1,
    "sandbox-runner": m2,
    kernel: m3,
    approval: m4,
    worker: m5,
    "gatekeeper-git": m6,
  };
  const gatekeepers = `mcp=127.0.0.1:${mcp},git=127.0.0.1:${gitPort}`;
  mkdirSync(join(dir, "repos"), { recursive: true });
  const secret = randomBytes(32).toString("hex");
  const memoryFile = join(dir, "memory.jsonl");
  const registry = join(dir, "registry.yaml");
  writeFileSync(
    registry,
    [
      "servers:",
      "  memory:",
      `    command: ${JSON.stringify(process.execPath)}`,
      `    args: [${JSON.stringify(join(ROOT, "node_modules/@modelcontextprotocol/server-memory/dist/index.js"))}]`,
      `    env: { MEMORY_FILE_PATH: ${JSON.stringify(memoryFile)} }`,
      "    vetted: true",
      "",
    ].join("\n"),
  );
  temporal = await startTemporalDevServer();
  const common = {
    GATEHOUSE_DATA_DIR: join(dir, "data"),
    GATEHOUSE_CALLER_TOKEN_SECRET: secret,
    TEMPORAL_ADDRESS: temporal.address,
  };
  const procs = [
    [
      "approval",
      service("approval", "services/approval/src/main.ts", {
        ...common,
        APPROVAL_ADDR: `127.0.0.1:${approval}`,
        METRICS_ADDR: `127.0.0.1:${m4}`,
        GATEKEEPER_ADDRESSES: gatekeepers,
      }),
      approval,
    ],
    [
      "gatekeeper-mcp",
      service("gatekeeper-mcp", "services/gatekeeper-mcp/src/main.ts", {
        GATEKEEPER_MCP_ADDR: `127.0.0.1:${mcp}`,
        APPROVAL_ADDRESS: `127.0.0.1:${approval}`,
        GATEKEEPER_MCP_REGISTRY: registry,
        GATEKEEPER_MCP_METRICS_ADDR: `127.0.0.1:${m1}`,
      }),
      mcp,
    ],
    [
      "gatekeeper-git",
      service("gatekeeper-git", "services/gatekeeper-git/src/main.ts", {
        GATEKEEPER_GIT_ADDR: `127.0.0.1:${gitPort}`,
        APPROVAL_ADDRESS: `127.0.0.1:${approval}`,
        GATEKEEPER_GIT_ALLOWED_ROOTS: join(dir, "repos"),
        GATEKEEPER_GIT_CACHE_DIR: join(dir, "git-cache"),
        GATEKEEPER_GIT_METRICS_ADDR: `127.0.0.1:${m6}`,
      }),
      gitPort,
    ],
    [
      "worker",
      service("worker", "services/worker/src/main.ts", {
        ...common,
        GATEKEEPER_ADDRESSES: gatekeepers,
        WORKER_METRICS_ADDR: `127.0.0.1:${m5}`,
      }),
      m5,
    ],
    [
      "sandbox-runner",
      service("sandbox-runner", "sandbox-runner/src/main.ts", {
        SANDBOX_RUNNER_ADDR: `127.0.0.1:${runner}`,
        SANDBOX_RUNNER_METRICS_ADDR: `127.0.0.1:${m2}`,
      }),
      runner,
    ],
    [
      "kernel",
      service("kernel", "services/kernel/src/main.ts", {
        ...common,
        KERNEL_ADDR: `127.0.0.1:${kernel}`,
        KERNEL_METRICS_ADDR: `127.0.0.1:${m3}`,
        GATEKEEPER_ADDRESSES: gatekeepers,
        SANDBOX_RUNNER_ADDRESS: `127.0.0.1:${runner}`,
      }),
      kernel,
    ],
  ] as const;
  try {
    for (const [name, child, port] of procs) await waitForPort(port, child, name);
  } catch (err) {
    for (const [name, text] of logs) console.error(`--- ${name}\n${text}`);
    throw err;
  }
  env = {
    ...process.env,
    GATEHOUSE_USER: "dev-approver",
    GATEHOUSE_KERNEL_ADDRESS: `127.0.0.1:${kernel}`,
    GATEHOUSE_APPROVAL_ADDRESS: `127.0.0.1:${approval}`,
    GATEHOUSE_DATA_DIR: join(dir, "cli"),
  };
});

after(async () => {
  for (const c of children) c.kill("SIGTERM");
  await Promise.all(
    children.map((c) => (c.exitCode !== null ? undefined : new Promise((r) => c.once("exit", r)))),
  );
  await temporal?.close();
  rmSync(dir, { recursive: true, force: true });
});

async function gatehouse(...args: string[]): Promise<string> {
  const { stdout } = await run(
    process.execPath,
    ["--no-node-snapshot", "--import", "tsx", join(ROOT, "apps/cli/src/main.ts"), ...args],
    { cwd: ROOT, env, timeout: 120_000 },
  );
  return stdout;
}

test("a write submitted in one process is held, approved through another, and applied once by the gatekeeper process", async () => {
  const ws = JSON.parse(await gatehouse("--json", "workspace", "create", "--name", "split")).id as string;
  await gatehouse("connect", ws, "mcp://memory");
  const snippet = join(dir, "write.ts");
  writeFileSync(
    snippet,
    `export default async (env: any) => env.MEMORY.create_entities({ entities: [{ name: "Split", entityType: "test", observations: [] }] });\n`,
  );
  const exec = JSON.parse(await gatehouse("--json", "exec", ws, snippet));
  assert.equal(exec.ok, true, JSON.stringify(exec.error));
  const { actionId, status } = JSON.parse(exec.returnJson);
  assert.equal(status, "pending");
  const memory = () => {
    try {
      return readFileSync(join(dir, "memory.jsonl"), "utf8");
    } catch {
      return "";
    }
  };
  assert.doesNotMatch(memory(), /Split/, "nothing reached the MCP server before approval");
  const pending = JSON.parse(await gatehouse("--json", "actions", ws, "--pending"));
  assert.deepEqual(
    pending.map((a: { id: number }) => a.id),
    [actionId],
  );
  await gatehouse("approve", ws, String(actionId));
  assert.equal(memory().match(/"Split"/g)?.length, 1, "applied exactly once");
  const log = JSON.parse(await gatehouse("--json", "replay", ws));
  const entry = log.entries.find((e: { id: number }) => e.id === actionId);
  assert.equal(entry.action.status, "ACTION_STATUS_APPLIED");
  assert.match(await gatehouse("verify", ws), /^ok/);
});

test("gatehouse revert: an action that is not applied is refused with the reason, as text or --json", async () => {
  const ws = JSON.parse(await gatehouse("--json", "workspace", "create", "--name", "revert")).id as string;
  await gatehouse("connect", ws, "mcp://memory");
  const snippet = join(dir, "pending.ts");
  writeFileSync(
    snippet,
    `export default async (env: any) => env.MEMORY.create_entities({ entities: [{ name: "Pending", entityType: "test", observations: [] }] });\n`,
  );
  const { actionId } = JSON.parse(JSON.parse(await gatehouse("--json", "exec", ws, snippet)).returnJson);
  const failure = (p: Promise<unknown>) =>
    p.then(
      () => assert.fail("expected gatehouse to exit 1"),
      (e: { code: number; stderr: string }) => e,
    );
  const text = await failure(gatehouse("revert", ws, String(actionId)));
  assert.equal(text.code, 1);
  assert.match(
    text.stderr,
    new RegExp(`^gatehouse: action ${actionId} cannot be reverted: it is still pending.*reject it instead`),
  );
  const json = await failure(gatehouse("--json", "revert", ws, String(actionId), "--by", "user:carol"));
  assert.equal(JSON.parse(json.stderr).error.code, "FAILED_PRECONDITION");
  const usage = await failure(gatehouse("revert", ws, String(actionId), "--by", "carol"));
  assert.match(usage.stderr, /--by must be "user:<id>"/);
  const log = JSON.parse(await gatehouse("--json", "log", ws));
  assert.deepEqual(
    log.entries.map((e: { action?: { status: string } }) => e.action?.status),
    ["ACTION_STATUS_PENDING"],
    "the refused revert requests appended nothing",
  );
});

test("every service process answers /healthz and exports Prometheus metrics", async () => {
  for (const [name, port] of Object.entries(opsPorts)) {
    const health = await fetch(`http://127.0.0.1:${port}/healthz`);
    assert.equal(health.status, 200, `${name} /healthz`);
    const metrics = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
    assert.match(metrics, /^# HELP /m, `${name} /metrics`);
  }
});

test("git in split mode: a commit from a snippet is held, approved through the CLI, and written by the gatekeeper-git process", async () => {
  const bare = makeBareRepo(dir, join(dir, "repos", "split.git"), { "a.md": "a\n" });
  const ws = JSON.parse(await gatehouse("--json", "workspace", "create", "--name", "split-git")).id as string;
  await gatehouse("connect", ws, `git+file://${bare}`);
  const snippet = join(dir, "commit.ts");
  writeFileSync(
    snippet,
    `export default async (env: any) => env.REPO.commit({ branch: "main", message: "from split", changes: [{ path: "b.md", content: "b\\n" }] });\n`,
  );
  const exec = JSON.parse(await gatehouse("--json", "exec", ws, snippet));
  assert.equal(exec.ok, true, JSON.stringify(exec.error));
  assert.equal(git(bare, "log", "--format=%s", "main"), "initial");
  const pending = JSON.parse(await gatehouse("--json", "actions", ws, "--pending"));
  const id = (pending.actions ?? pending)[0].id as number;
  await gatehouse("approve", ws, String(id));
  assert.equal(git(bare, "log", "--format=%s", "main"), "from split\ninitial");
  assert.equal(git(bare, "show", "main:b.md"), "b");
  const metrics = await (await fetch(`http://127.0.0.1:${opsPorts["gatekeeper-git"]}/metrics`)).text();
  // The lifecycle applies through the batch RPC (issue 13): one ApplyActions run for the one commit.
  assert.match(metrics, /gatekeeper_git_rpcs_total\{method="ApplyActions",code="OK"\} 1/);
});
