/**
 * `gatehouse dev` as a process: killed with SIGKILL, its children (the Temporal dev server, the
 * gVisor sandboxes, the MCP servers) die with it, and the next start on the same data dir and
 * ports removes the gVisor files it left and starts; a port held by another process is refused
 * naming that process's pid. Real processes throughout: the CLI, `temporal server start-dev`,
 * runsc (when installed), the memory MCP server from npm.
 */
import assert from "node:assert/strict";
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { after, test } from "node:test";
import { KernelClient } from "@gatehouse/proto";
import { callUnary, canConnect, type ProcessInfo, processInfo, waitUntil } from "@gatehouse/service-kit";
import { credentials } from "@grpc/grpc-js";

const ROOT = resolve(import.meta.dirname, "../..");
const MAIN = join(ROOT, "apps/cli/src/main.ts");
const linux = process.platform === "linux";
const hasRunsc = (() => {
  try {
    execFileSync("sh", ["-c", "command -v runsc"], { stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
})();

const spawned: ChildProcess[] = [];
const dirs: string[] = [];
after(() => {
  for (const c of spawned) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

/** Waits until `check` holds (service-kit's waitUntil); a timeout's message adds `detail()`. */
async function until(check: () => boolean | Promise<boolean>, what: string, ms = 120_000, detail = () => "") {
  await waitUntil(what, check, { timeoutMs: ms, intervalMs: 100 }).catch((err: Error) =>
    assert.fail(`${err.message}${detail() ? `: ${detail()}` : ""}`),
  );
}

/** Seven consecutive free loopback ports: --port-base n uses n..n+5, the gateway n+6. */
async function freePortBase(): Promise<number> {
  for (;;) {
    const base = 20_000 + Math.floor(Math.random() * 30_000);
    const busy = await Promise.all([0, 1, 2, 3, 4, 5, 6].map((i) => canConnect(base + i)));
    if (!busy.some(Boolean)) return base;
  }
}

interface Dev {
  child: ChildProcess;
  output(): string;
  exited: Promise<number | null>;
}

/**
 * Starts `gatehouse dev` on `dir` and `base` (web app on `webPort`, default n+6), with `extra` options;
 * `ready` waits for its sign-in links.
 */
function startDev(dir: string, base: number, extra: string[] = [], webPort = base + 6): Dev {
  const env: NodeJS.ProcessEnv = { ...process.env, GATEHOUSE_DATA_DIR: dir, LOG_LEVEL: "warn" };
  delete env.TEMPORAL_ADDRESS;
  const child = spawn(
    process.execPath,
    [
      "--no-node-snapshot",
      "--import",
      "tsx",
      MAIN,
      "dev",
      "--port-base",
      String(base),
      "--web-port",
      String(webPort),
      "--sandbox",
      hasRunsc ? "gvisor" : "none",
      ...extra,
    ],
    { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"] },
  );
  spawned.push(child);
  let out = "";
  child.stdout?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  child.stderr?.on("data", (d: Buffer) => {
    out += d.toString();
  });
  const exited = new Promise<number | null>((r) => child.once("exit", (code) => r(code)));
  return { child, output: () => out, exited };
}

async function ready(dev: Dev): Promise<void> {
  await until(
    () => dev.output().includes("approver web app:") || dev.child.exitCode !== null,
    "gatehouse dev to start",
    240_000,
  );
  assert.equal(dev.child.exitCode, null, `gatehouse dev exited:\n${dev.output()}`);
}

/** Every live descendant of `pid` (from /proc: each process's parent pid). */
function descendants(pid: number): ProcessInfo[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
    } catch {
      // exited meanwhile
    }
  }
  const out: ProcessInfo[] = [];
  const queue = [...(children.get(pid) ?? [])];
  while (queue.length) {
    const p = queue.shift() as number;
    const info = processInfo(p);
    if (info) out.push(info);
    queue.push(...(children.get(p) ?? []));
  }
  return out;
}

/** True while the very process `p` (same start time) still runs. */
function alive(p: ProcessInfo): boolean {
  const now = processInfo(p.pid);
  return now !== undefined && now.startTicks === p.startTicks;
}

test("kill -9 of gatehouse dev takes its children with it; the next start removes what it left and starts on the same ports", {
  skip: !linux,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-devproc-"));
  dirs.push(dir);
  const base = await freePortBase();
  const first = startDev(dir, base);
  await ready(first);
  const pid = first.child.pid as number;

  // An MCP server and a sandbox at work: a read through the memory server.
  const kernel = new KernelClient(`127.0.0.1:${base}`, credentials.createInsecure());
  const ws = await callUnary(kernel, kernel.createWorkspace, { name: "devproc", owner: "", members: [] });
  await callUnary(kernel, kernel.introduceResource, { workspaceId: ws.id, url: "mcp://memory", name: "" });
  const r = await callUnary(
    kernel,
    kernel.executeCode,
    {
      workspaceId: ws.id,
      code: "export default async (env: any) => (await env.MEMORY.read_graph({})).content.length",
      caller: { kind: "user", id: "t" },
      limits: { wallTimeMs: 60_000, heapMb: 0, outputBytes: 0 },
      executionId: "",
    },
    180_000,
  );
  kernel.close();
  assert.equal(r.ok, true, JSON.stringify(r.error));

  const kinds = (ps: ProcessInfo[]) => ({
    temporal: ps.some((p) => /\bserver start-dev\b/.test(p.command) && p.command.includes(dir)),
    memory: ps.some((p) => p.command.includes("server-memory")),
    runsc: ps.some((p) => /\brunsc\b/.test(p.command)),
  });
  await until(
    () => {
      const k = kinds(descendants(pid));
      return k.temporal && k.memory && (!hasRunsc || k.runsc);
    },
    "the Temporal dev server, the memory MCP server and (with gVisor) a runsc sandbox under gatehouse dev",
    120_000,
    () =>
      descendants(pid)
        .map((p) => p.command.slice(0, 100))
        .join("\n"),
  );
  const children = descendants(pid);
  const gvisorDir = children
    .map((p) => /--root=(\S+)\/state\b/.exec(p.command)?.[1])
    .find((d): d is string => Boolean(d));
  if (hasRunsc) assert.ok(gvisorDir && existsSync(gvisorDir), "the runner's gVisor dir exists");

  first.child.kill("SIGKILL");
  await first.exited;
  await until(
    () => !children.some(alive),
    "every child of the killed gatehouse dev to die",
    60_000,
    () =>
      children
        .filter(alive)
        .map((p) => `${p.pid} ${p.command.slice(0, 100)}`)
        .join("\n"),
  );

  // The next start on the same data dir and ports starts, and removes the gVisor dir left behind.
  const second = startDev(dir, base);
  await ready(second);
  if (gvisorDir) assert.equal(existsSync(gvisorDir), false, `${gvisorDir} was removed at the next start`);
  assert.ok(existsSync(join(dir, "temporal.pid")));
  const own = (parent: string) =>
    readdirSync(parent)
      .filter((n) => n.startsWith("gatehouse-gvisor-"))
      .map((n) => join(parent, n))
      .filter((d) => {
        try {
          return JSON.parse(readFileSync(join(d, "owner.json"), "utf8")).pid === second.child.pid;
        } catch {
          return false;
        }
      });
  const secondDirs = gvisorDir ? own(dirname(gvisorDir)) : [];
  if (gvisorDir) assert.equal(secondDirs.length, 1, "the second start made its own gVisor dir");
  second.child.kill("SIGTERM");
  assert.equal(await second.exited, 0, second.output());
  assert.equal(existsSync(join(dir, "temporal.pid")), false, "a clean stop removes the Temporal pid file");
  for (const d of secondDirs) assert.equal(existsSync(d), false, "a clean stop removes its own gVisor dir");
});

test("a port held by another process is refused naming that process's pid, for a service port, the Temporal port and the git gatekeeper's", {
  skip: !linux,
}, async () => {
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-devproc-"));
  dirs.push(dir);
  for (const offset of [0, 4, 5]) {
    const base = await freePortBase();
    const port = base + offset;
    const holder = spawn(
      process.execPath,
      ["-e", `require("node:net").createServer().listen(${port}, "127.0.0.1", () => console.log("up"))`],
      { stdio: ["ignore", "pipe", "inherit"] },
    );
    spawned.push(holder);
    let up = "";
    holder.stdout?.on("data", (d: Buffer) => {
      up += d.toString();
    });
    await until(() => up.includes("up"), "the port holder to listen", 60_000);
    const dev = startDev(dir, base);
    const code = await Promise.race([
      dev.exited,
      new Promise<"hung">((r) => setTimeout(() => r("hung"), 180_000)),
    ]);
    assert.equal(code, 1, dev.output());
    assert.match(dev.output(), new RegExp(`port ${port}\\b.* is already in use by pid ${holder.pid} \\(`));
    assert.match(dev.output(), new RegExp(`kill ${holder.pid}\\b`));
    holder.kill("SIGKILL");
  }
});

test("--postgres-registry naming a missing or invalid file exits 2 naming the file and the problem, with nothing started", async () => {
  const files = mkdtempSync(join(tmpdir(), "gatehouse-pgreg-"));
  dirs.push(files);
  const invalid = join(files, "pg-registry.yaml");
  writeFileSync(
    invalid,
    [
      "servers:",
      "  crm:",
      "    host: db.internal",
      "    databases: [crm]",
      "    readRole: { user: gatehouse_read, password: hunter2-inline }",
      "    writeRole: { user: gatehouse_write, passwordEnv: CRM_WRITE_PASSWORD }",
      "",
    ].join("\n"),
  );
  const cases: Array<[string, RegExp]> = [
    [
      "/nonexistent",
      /^gatehouse dev: --postgres-registry: cannot read postgres registry file \/nonexistent \(ENOENT: no such file\)\n$/m,
    ],
    [
      invalid,
      new RegExp(
        `^gatehouse dev: --postgres-registry ${invalid.replaceAll("/", "\\/")}: postgres registry is invalid: servers\\.crm\\.readRole: inline "password" is not allowed; use passwordFile or passwordEnv`,
        "m",
      ),
    ],
  ];
  for (const [file, message] of cases) {
    const dir = mkdtempSync(join(tmpdir(), "gatehouse-devproc-"));
    dirs.push(dir);
    const base = await freePortBase();
    // The web app off n+6, which is the postgres gatekeeper's port with --postgres-registry.
    const dev = startDev(dir, base, ["--postgres-registry", file], base + 7);
    const code = await dev.exited;
    assert.equal(code, 2, dev.output());
    assert.match(dev.output(), message);
    assert.doesNotMatch(dev.output(), /hunter2-inline/, "the inline password is not echoed");
    // Nothing was started: no port of the stack listens, nothing was written to the data dir.
    for (let i = 0; i <= 7; i++) assert.equal(await canConnect(base + i), false, `port ${base + i} is free`);
    assert.deepEqual(readdirSync(dir), [], `${dir} holds no data, dev.json or temporal.pid`);
  }
});
