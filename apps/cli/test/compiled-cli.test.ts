/**
 * The `gatehouse` command runs the compiled CLI (apps/cli/dist, made by `npm run build`) with
 * plain node, no tsx: the commands that need no service, a clear error when dist/ is missing, and
 * `gatehouse dev` itself (which loads the services from source through tsx) serving the compiled
 * CLI's `workspace create`/`list` and `actions` — real processes and the real Temporal dev server.
 */
import assert from "node:assert/strict";
import { type ChildProcess, execFile, spawn } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { after, test } from "node:test";
import { promisify } from "node:util";
import { canConnect, waitUntil } from "@gatehouse/service-kit";

const ROOT = resolve(import.meta.dirname, "../../..");
const BIN = join(ROOT, "apps/cli/bin/gatehouse.js");
const run = promisify(execFile);
const dirs: string[] = [];
const children: ChildProcess[] = [];
after(async () => {
  for (const c of children) {
    if (c.exitCode === null && c.signalCode === null) {
      c.kill("SIGTERM");
      await new Promise((r) => c.once("exit", r));
    }
  }
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

function tempDir(): string {
  const d = mkdtempSync(join(tmpdir(), "gatehouse-compiled-"));
  dirs.push(d);
  return d;
}

/** `node bin/gatehouse.js …` (no --import tsx); never throws (exit code in `code`). */
async function gatehouse(
  args: string[],
  env: NodeJS.ProcessEnv = {},
  bin = BIN,
): Promise<{ stdout: string; stderr: string; code: number }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [bin, ...args], {
      env: { ...process.env, GATEHOUSE_USER: "dev-approver", ...env },
      timeout: 120_000,
    });
    return { stdout, stderr, code: 0 };
  } catch (err) {
    const e = err as { stdout: string; stderr: string; code: number };
    return { stdout: e.stdout, stderr: e.stderr, code: e.code };
  }
}

test("the compiled CLI answers --version and --help without tsx", async () => {
  const version = JSON.parse(readFileSync(join(ROOT, "apps/cli/package.json"), "utf8")).version;
  const v = await gatehouse(["--version"]);
  assert.equal(v.code, 0, v.stderr);
  assert.equal(v.stdout.trim(), version);
  const help = await gatehouse(["--help"]);
  assert.equal(help.code, 0, help.stderr);
  assert.match(help.stdout, /approve \[options\] <workspace> \[ids\.\.\.\]/);
  assert.match(help.stdout, /review \[options\] <workspace>/);
  const approve = await gatehouse(["approve", "--help"]);
  assert.equal(approve.code, 0, approve.stderr);
  assert.match(approve.stdout, /--stall-timeout <duration>/);
  assert.match(approve.stdout, /Global Options:\n(.*\n)*\s+--json\s+print machine-readable JSON/);
});

test("without dist/ the command says to run npm run setup", async () => {
  const copy = join(tempDir(), "cli");
  mkdirSync(join(copy, "bin"), { recursive: true });
  copyFileSync(BIN, join(copy, "bin", "gatehouse.js"));
  const out = await gatehouse(["--version"], {}, join(copy, "bin", "gatehouse.js"));
  assert.equal(out.code, 1);
  assert.match(
    out.stderr,
    /the compiled CLI .*dist\/main\.js is missing; run npm run setup in the repository root first \(it installs what is missing and builds the CLI\)\n$/,
  );
});

/** Seven consecutive free loopback ports: --port-base n uses n..n+5, the gateway n+6. */
async function freePortBase(): Promise<number> {
  for (;;) {
    const base = 20_000 + Math.floor(Math.random() * 30_000);
    const busy = await Promise.all([0, 1, 2, 3, 4, 5, 6].map((i) => canConnect(base + i)));
    if (!busy.some(Boolean)) return base;
  }
}

test("gatehouse dev runs from the compiled CLI and serves its commands", async () => {
  const dir = tempDir();
  const base = await freePortBase();
  const env: NodeJS.ProcessEnv = { ...process.env, GATEHOUSE_DATA_DIR: dir, LOG_LEVEL: "warn" };
  delete env.TEMPORAL_ADDRESS;
  const child = spawn(
    process.execPath,
    [
      "--no-node-snapshot",
      BIN,
      "dev",
      "--port-base",
      String(base),
      "--web-port",
      String(base + 6),
      "--sandbox",
      "none",
    ],
    { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] },
  );
  children.push(child);
  let output = "";
  child.stdout?.on("data", (d: Buffer) => {
    output += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    output += d.toString();
  });
  await waitUntil(
    "gatehouse dev to start",
    () => output.includes("approver web app:") || child.exitCode !== null,
    {
      timeoutMs: 240_000,
      intervalMs: 100,
    },
  );
  assert.equal(child.exitCode, null, `gatehouse dev exited:\n${output}`);
  // Every port follows --port-base: kernel n, approval n+1, mcp n+2, runner n+3, Temporal n+4, git n+5.
  for (const [name, offset] of [
    ["kernel", 0],
    ["approval", 1],
    ["mcp gatekeeper", 2],
    ["git gatekeeper", 5],
    ["sandbox runner", 3],
    ["temporal", 4],
  ] as const) {
    assert.ok(
      output.includes(`${name} 127.0.0.1:${base + offset}`),
      `${name} on ${base + offset}:\n${output}`,
    );
  }

  const created = await gatehouse(
    ["workspace", "create", "--name", "compiled", "--owner", "user:dev-admin"],
    {
      GATEHOUSE_DATA_DIR: dir,
    },
  );
  assert.equal(created.code, 0, created.stderr);
  const ws = created.stdout.trim();
  const list = await gatehouse(["workspace", "list"], { GATEHOUSE_DATA_DIR: dir });
  assert.match(list.stdout, new RegExp(`^${ws}\tcompiled\t`, "m"));
  const actions = await gatehouse(["actions", ws], { GATEHOUSE_DATA_DIR: dir });
  assert.equal(actions.stdout.trim(), "(no actions)");

  child.kill("SIGTERM");
  assert.equal(await new Promise((r) => child.once("exit", r)), 0);
});
