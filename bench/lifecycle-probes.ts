/**
 * What `npm run bench:lifecycle` reads about the machine and the running stack besides gRPC timings:
 * processes' resident memory, which lifecycle engine ran (Temporal workflow types), and how long the
 * `gatehouse` CLI takes to start.
 */
import { spawn } from "node:child_process";
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { performance } from "node:perf_hooks";
import { Client, Connection } from "@temporalio/client";
import { log } from "./support.ts";

/** VmRSS of `pid` in KiB (from /proc/<pid>/status); 0 when the process is gone or not Linux. */
export function rssKiB(pid: number): number {
  try {
    const m = /^VmRSS:\s+(\d+)\s+kB/m.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    return m ? Number(m[1]) : 0;
  } catch {
    return 0;
  }
}

/** Every live descendant of `pid` (children, their children, ...), from /proc/<n>/stat. */
export function descendants(pid: number): number[] {
  const parentOf = new Map<number, number>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, "utf8");
      // "pid (comm) state ppid ..." — comm may hold spaces and parentheses: split after the last ")".
      const ppid = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]);
      parentOf.set(Number(name), ppid);
    } catch {
      // exited meanwhile
    }
  }
  const out: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const p = queue.shift() as number;
    for (const [child, parent] of parentOf) {
      if (parent === p) {
        out.push(child);
        queue.push(child);
      }
    }
  }
  return out;
}

/** The Temporal dev server's pid, from the pid file `gatehouse dev` writes (`<dataDir>/temporal.pid`). */
export function temporalPid(dataDir: string): number {
  const pid = (JSON.parse(readFileSync(join(dataDir, "temporal.pid"), "utf8")) as { pid?: number }).pid;
  if (typeof pid !== "number") throw new Error(`no pid in ${join(dataDir, "temporal.pid")}`);
  return pid;
}

/** Resident memory of the stack, KiB: this process (every in-process service), Temporal, other children. */
export interface RssSample {
  stackKiB: number;
  temporalKiB: number;
  /** MCP servers, the sandbox runner's children, ... (every descendant but Temporal). */
  childrenKiB: number;
  /** `childrenKiB` by what runs (see `processLabel`), largest first. */
  children: { label: string; kib: number; processes: number }[];
  totalKiB: number;
}

/**
 * What process `pid` runs, for grouping: the executable's base name, with the script's base name
 * for node (`node server-memory/dist/index.js` → "node index.js (server-memory)"), the kernel's
 * name (comm) when the command line is hidden; "" when gone.
 */
export function processLabel(pid: number): string {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean);
    const exe = argv[0]?.split("/").at(-1) || readFileSync(`/proc/${pid}/comm`, "utf8").trim();
    if (exe !== "node") return exe;
    const script = argv.slice(1).find((a) => !a.startsWith("-") && /\.(m?js|ts)$/.test(a)) ?? "";
    const parts = script.split("/");
    const pkg = parts.includes("node_modules") ? parts[parts.lastIndexOf("node_modules") + 1] : parts.at(-3);
    return `node ${parts.at(-1) ?? ""}${pkg ? ` (${pkg === "@modelcontextprotocol" ? parts[parts.lastIndexOf("node_modules") + 2] : pkg})` : ""}`;
  } catch {
    return "";
  }
}

/** Samples the RSS of this process, the Temporal server `temporal`, and this process's other descendants. */
export function sampleRss(temporal: number): RssSample {
  const stackKiB = rssKiB(process.pid);
  const temporalKiB = rssKiB(temporal);
  const others = descendants(process.pid).filter((p) => p !== temporal && !descendants(temporal).includes(p));
  const byLabel = new Map<string, { kib: number; processes: number }>();
  let childrenKiB = 0;
  for (const p of others) {
    const kib = rssKiB(p);
    childrenKiB += kib;
    const label = processLabel(p) || "(exited)";
    const g = byLabel.get(label) ?? { kib: 0, processes: 0 };
    g.kib += kib;
    g.processes++;
    byLabel.set(label, g);
  }
  const children = [...byLabel].map(([label, g]) => ({ label, ...g })).sort((a, b) => b.kib - a.kib);
  return { stackKiB, temporalKiB, childrenKiB, children, totalKiB: stackKiB + temporalKiB + childrenKiB };
}

/**
 * The lifecycle engine as the Temporal server saw it run: workflow executions by type (e.g.
 * `{"actionLifecycle": 6053, "awaitDecisionTurn": 0}`), read from its visibility store. Counts at most
 * `limit` executions (then `truncated`).
 */
export async function workflowTypes(
  address: string,
  limit = 50_000,
): Promise<{ types: Record<string, number>; truncated: boolean }> {
  const connection = await Connection.connect({ address });
  try {
    const client = new Client({ connection });
    const types: Record<string, number> = {};
    let seen = 0;
    for await (const wf of client.workflow.list({ pageSize: 1000 })) {
      types[wf.type] = (types[wf.type] ?? 0) + 1;
      if (++seen >= limit) return { types, truncated: true };
    }
    return { types, truncated: false };
  } finally {
    await connection.close();
  }
}

/** A command line to spawn: the program, its arguments, and how the README's user runs it. */
export interface CliCommand {
  command: string;
  args: string[];
  /** What ran, e.g. `node apps/cli/dist/main.js` or the root package.json's "gatehouse" script. */
  label: string;
}

/**
 * The `gatehouse` command as users run it (README: `npm run gatehouse -- <command>`): the bin that
 * apps/cli/package.json declares when it declares one, else the root package.json's "gatehouse"
 * script (without npm's own start-up), with `node` replaced by this Node binary.
 * @throws Error when neither exists.
 */
export function gatehouseCli(root: string): CliCommand {
  const cli = JSON.parse(readFileSync(join(root, "apps/cli/package.json"), "utf8")) as {
    bin?: string | Record<string, string>;
  };
  const bin = typeof cli.bin === "string" ? cli.bin : cli.bin?.gatehouse;
  if (bin) {
    return {
      command: process.execPath,
      args: [join(root, "apps/cli", bin)],
      label: `node apps/cli/${bin.replace(/^\.\//, "")} (apps/cli bin)`,
    };
  }
  const script = (
    JSON.parse(readFileSync(join(root, "package.json"), "utf8")) as { scripts?: Record<string, string> }
  ).scripts?.gatehouse;
  if (!script) throw new Error(`no "gatehouse" bin in apps/cli/package.json nor script in package.json`);
  if (/[|&;$<>`]/.test(script))
    return { command: "sh", args: ["-c", `${script} "$@"`, "gatehouse"], label: script };
  const [program, ...args] = script.split(/\s+/).filter(Boolean);
  return {
    command: program === "node" ? process.execPath : (program as string),
    args: args.map((a) => (a.startsWith("packages/") ? join(root, a) : a)),
    label: `${script} (package.json "gatehouse" script)`,
  };
}

/**
 * Wall time of `runs` spawns of `command args…` one after another, ms each; the output is read and
 * dropped. Asynchronous, so services in this process keep answering the spawned command.
 * @throws Error naming the command and its stderr when a run exits non-zero.
 */
export async function timeSpawns(
  command: string,
  args: string[],
  runs: number,
  env: NodeJS.ProcessEnv = process.env,
): Promise<number[]> {
  const samples: number[] = [];
  for (let i = 0; i < runs; i++) {
    const began = performance.now();
    const child = spawn(command, args, { env, stdio: ["ignore", "pipe", "pipe"] });
    let stderr = "";
    child.stdout.resume();
    child.stderr.on("data", (d: Buffer) => {
      stderr = (stderr + d.toString()).slice(-2000);
    });
    const code = await new Promise<number | string | null>((resolve, reject) => {
      child.once("error", reject);
      child.once("close", (c, signal) => resolve(c ?? signal));
    });
    const ms = performance.now() - began;
    if (code !== 0) throw new Error(`${command} ${args.join(" ")} exited ${code}: ${stderr}`);
    samples.push(ms);
  }
  return samples;
}

/** How many gVisor sandboxes (runsc) run below this process. */
export function runscSandboxes(): number {
  return descendants(process.pid).filter((p) => processLabel(p) === "runsc-sandbox").length;
}

/**
 * Waits (up to a minute, then goes on with a note) until `n` gVisor sandboxes run — the warm spare
 * the runner starts after a workspace leased the previous one — and this process's descendants
 * stayed the same for a second (the spare's isolate host started inside it).
 */
export async function refilled(n: number): Promise<void> {
  const until = Date.now() + 60_000;
  let seen = "";
  for (;;) {
    const now = descendants(process.pid).sort().join(",");
    const enough = runscSandboxes() >= n;
    if (enough && now === seen) return;
    if (Date.now() > until) {
      log("the sandbox runner's warm spare did not settle within a minute; memory is sampled anyway");
      return;
    }
    seen = enough ? now : "";
    await new Promise((r) => setTimeout(r, 1000));
  }
}
