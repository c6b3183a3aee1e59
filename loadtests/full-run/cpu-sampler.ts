/**
 * Per-process CPU from /proc, sampled once a second: `gatehouse dev`'s process (every Gatehouse
 * service in one Node process, split further into its threads: the JS main thread, libuv's pool, V8's
 * helpers, the Temporal worker's threads) and its children — the Temporal dev server, the MCP servers,
 * the gVisor sandboxes — plus the harness's own processes, which share the same 2 cores. Linux only.
 */
import { readdirSync, readFileSync } from "node:fs";
import { loadavg } from "node:os";

const TICKS_PER_SECOND = 100; // USER_HZ on Linux

/** CPU time (user + system), in clock ticks, of a /proc stat file; undefined when gone. */
function ticksOf(statPath: string): { ticks: number; comm: string; ppid: number } | undefined {
  try {
    const stat = readFileSync(statPath, "utf8");
    const close = stat.lastIndexOf(")");
    const comm = stat.slice(stat.indexOf("(") + 1, close);
    const f = stat.slice(close + 2).split(" ");
    return { ticks: Number(f[11]) + Number(f[12]), comm, ppid: Number(f[1]) };
  } catch {
    return undefined;
  }
}

/** What a process is, from its command line. */
export function classify(pid: number): string {
  let cmd = "";
  try {
    cmd = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").join(" ");
  } catch {
    return "gone";
  }
  if (/server-memory/.test(cmd)) return "memory MCP server";
  if (/server-filesystem/.test(cmd)) return "files MCP server";
  if (/\btemporal\b.*server start-dev/.test(cmd)) return "Temporal dev server";
  if (/runsc|isolate-host/.test(cmd)) return "gVisor sandboxes";
  if (/harness\/cli\.ts/.test(cmd)) return "test harness";
  if (/\bdev\b/.test(cmd) && /gatehouse|cli\/src\/main\.ts/.test(cmd)) return "gatehouse dev";
  return cmd.split(" ")[0]?.split("/").pop() ?? "other";
}

/** A thread of `gatehouse dev`, grouped by its name (comm). */
function threadGroup(comm: string): string {
  if (comm === "node" || comm === "MainThread") return "JS main thread";
  if (/libuv-worker/.test(comm)) return "libuv thread pool";
  if (/^V8 /.test(comm)) return "V8 GC/compiler threads";
  if (/tokio|temporal|core/i.test(comm)) return "Temporal worker (native)";
  return comm;
}

/**
 * Every descendant of `root` with its group: a direct child by its command line, a deeper one by its
 * ancestor's (a gVisor sandbox's own processes, an MCP server's children).
 */
function descendants(root: number, rootGroup: string): [number, string][] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync("/proc")) {
    if (!/^\d+$/.test(name)) continue;
    const t = ticksOf(`/proc/${name}/stat`);
    if (t) children.set(t.ppid, [...(children.get(t.ppid) ?? []), Number(name)]);
  }
  const out: [number, string][] = [];
  const queue: [number, string][] = (children.get(root) ?? []).map((c) => [c, rootGroup]);
  while (queue.length) {
    const [pid, parentGroup] = queue.shift() as [number, string];
    const group = parentGroup === rootGroup ? classify(pid) : parentGroup;
    out.push([pid, group]);
    for (const c of children.get(pid) ?? []) queue.push([c, group]);
  }
  return out;
}

/** One second's CPU use by group, in % of one core (100 = one core busy). */
export interface CpuPoint {
  time: number;
  /** The machine's 1-minute load average then (every process, ours and others'). */
  load1: number;
  processes: Record<string, number>;
  devThreads: Record<string, number>;
}

/** Samples CPU each second until `stop`; `points` holds the per-second figures. */
export class CpuSampler {
  readonly points: CpuPoint[] = [];
  private last = new Map<string, number>();
  private lastAt = Date.now();
  private readonly timer: NodeJS.Timeout;
  /** Extra processes to watch (the harness's runs), by pid. */
  readonly extra = new Set<number>();

  constructor(private readonly devPid: number) {
    this.read();
    this.timer = setInterval(() => this.tick(), 1000);
  }

  private read(): Map<string, { ticks: number; group: string; thread?: string }> {
    const now = new Map<string, { ticks: number; group: string; thread?: string }>();
    const pids: [number, string][] = [
      [this.devPid, "gatehouse dev"],
      ...descendants(this.devPid, "gatehouse dev"),
    ];
    for (const x of this.extra) pids.push([x, "test harness"], ...descendants(x, "test harness"));
    for (const [pid, group] of pids) {
      if (pid === this.devPid) {
        let tasks: string[] = [];
        try {
          tasks = readdirSync(`/proc/${pid}/task`);
        } catch {
          continue;
        }
        for (const tid of tasks) {
          const t = ticksOf(`/proc/${pid}/task/${tid}/stat`);
          if (t) now.set(`t${tid}`, { ticks: t.ticks, group, thread: threadGroup(t.comm) });
        }
      } else {
        // A process's own stat counts all of its threads.
        const t = ticksOf(`/proc/${pid}/stat`);
        if (t) now.set(`p${pid}`, { ticks: t.ticks, group });
      }
    }
    return now;
  }

  private tick(): void {
    const at = Date.now();
    const seconds = (at - this.lastAt) / 1000;
    const now = this.read();
    const processes: Record<string, number> = {};
    const devThreads: Record<string, number> = {};
    for (const [key, v] of now) {
      const before = this.last.get(key);
      if (before === undefined) {
        this.last.set(key, v.ticks);
        continue;
      }
      const pct = ((v.ticks - before) / TICKS_PER_SECOND / seconds) * 100;
      processes[v.group] = (processes[v.group] ?? 0) + pct;
      if (v.thread) devThreads[v.thread] = (devThreads[v.thread] ?? 0) + pct;
    }
    this.last = new Map([...now].map(([k, v]) => [k, v.ticks]));
    this.lastAt = at;
    this.points.push({ time: at, load1: loadavg()[0] ?? 0, processes, devThreads });
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** Mean CPU % per group over [from, to) (epoch ms), and the mean 1-minute load average. */
  mean(
    from: number,
    to: number,
  ): { processes: Record<string, number>; devThreads: Record<string, number>; load1: number } {
    const inWindow = this.points.filter((p) => p.time >= from && p.time < to);
    const avg = (pick: (p: CpuPoint) => Record<string, number>) => {
      const sum: Record<string, number> = {};
      for (const p of inWindow) for (const [k, v] of Object.entries(pick(p))) sum[k] = (sum[k] ?? 0) + v;
      return Object.fromEntries(
        Object.entries(sum).map(([k, v]) => [k, Math.round(v / Math.max(1, inWindow.length))]),
      );
    };
    const load1 = inWindow.reduce((sum, p) => sum + p.load1, 0) / Math.max(1, inWindow.length);
    return {
      processes: avg((p) => p.processes),
      devThreads: avg((p) => p.devThreads),
      load1: Math.round(load1 * 10) / 10,
    };
  }
}
