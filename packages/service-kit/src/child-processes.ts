/**
 * Child processes that must not outlive the process that started them, and what to say about a
 * process found where ours should be: which pid it is, its command line, whether it still runs.
 * Linux is the platform these guarantees hold on (they read /proc and use util-linux `setpriv`);
 * elsewhere the helpers degrade to plain spawns and pid-only answers.
 */
import { type ChildProcess, execFile, type SpawnOptions, spawn } from "node:child_process";
import { accessSync, constants, readFileSync } from "node:fs";
import { delimiter, join } from "node:path";
import { promisify } from "node:util";
import { waitUntil } from "./wait.ts";

const execFileAsync = promisify(execFile);

/** What is known of a running process. */
export interface ProcessInfo {
  pid: number;
  /** Its command line, arguments joined by spaces ("" when it cannot be read). */
  command: string;
  /**
   * When it started, in clock ticks since boot (field 22 of /proc/<pid>/stat); with the pid it names
   * one process even after the pid is reused. 0 when unknown (not Linux).
   */
  startTicks: number;
}

/** The executable `name` in the directories of `path` (a PATH value), or null. */
function onPath(name: string, path: string): string | null {
  for (const dir of path.split(delimiter).filter(Boolean)) {
    try {
      accessSync(join(dir, name), constants.X_OK);
      return join(dir, name);
    } catch {
      // not here
    }
  }
  return null;
}

let setprivPath: string | null | undefined;

/** util-linux `setpriv` (PATH, then /usr/bin and /bin), or null when this machine has none. */
function setpriv(): string | null {
  if (setprivPath === undefined) {
    setprivPath =
      process.platform === "linux"
        ? onPath("setpriv", [process.env.PATH ?? "", "/usr/bin", "/bin"].join(delimiter))
        : null;
  }
  return setprivPath;
}

/**
 * Spawns `command` so that the kernel kills it (SIGKILL) when this process dies, however it dies —
 * `kill -9` included: through `setpriv --pdeathsig KILL`, which sets PR_SET_PDEATHSIG and then
 * execs `command`, so the child's pid is `command`'s. Node has no prctl of its own. Without setpriv
 * (not Linux, or util-linux missing) it is a plain spawn; pair it with a pid file (`pid-file.ts`)
 * so the next start can find a leftover. Same options and events as `child_process.spawn` (a
 * command missing from PATH still fails with its "error" event, ENOENT).
 * The death signal follows the thread that spawned: call it from the main thread.
 */
export function spawnTiedToParent(command: string, args: string[], options: SpawnOptions = {}): ChildProcess {
  const tie = setpriv();
  // A command that is not there keeps spawn's own "error" (ENOENT) instead of setpriv's exit 127.
  const path = command.includes("/") ? command : onPath(command, options.env?.PATH ?? process.env.PATH ?? "");
  return tie && path
    ? spawn(tie, ["--pdeathsig", "KILL", "--", path, ...args], options)
    : spawn(command, args, options);
}

/** Whether children spawned by `spawnTiedToParent` die with this process on this machine. */
export function childrenDieWithParent(): boolean {
  return setpriv() !== null;
}

/**
 * The live process `pid` (a zombie counts as gone), or undefined. On Linux with its command line
 * and start time from /proc; elsewhere only whether signal 0 reaches it.
 */
export function processInfo(pid: number): ProcessInfo | undefined {
  if (!Number.isInteger(pid) || pid <= 0) return undefined;
  if (process.platform !== "linux") {
    try {
      process.kill(pid, 0);
      return { pid, command: "", startTicks: 0 };
    } catch (err) {
      return (err as NodeJS.ErrnoException).code === "EPERM"
        ? { pid, command: "", startTicks: 0 }
        : undefined;
    }
  }
  let stat: string;
  try {
    stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  } catch {
    return undefined;
  }
  // "pid (comm) state ppid …": comm may hold spaces and parentheses, so split after the last ")".
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  if (fields[0] === "Z" || fields[0] === "X") return undefined;
  let command = "";
  try {
    command = readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0").filter(Boolean).join(" ");
  } catch {
    // exited meanwhile, or not ours to read
  }
  return { pid, command, startTicks: Number(fields[19]) || 0 };
}

/**
 * Stops `pid`: SIGTERM, then SIGKILL once `graceMs` (default 5000) passed; resolves when it is gone.
 * @throws Error naming the pid when it is still there 5 s after SIGKILL.
 */
export async function stopProcess(pid: number, graceMs = 5000): Promise<void> {
  const gone = (ms: number) =>
    waitUntil(`process ${pid} to exit`, () => !processInfo(pid), { timeoutMs: ms }).then(
      () => true,
      () => false,
    );
  const signal = (s: NodeJS.Signals) => {
    try {
      process.kill(pid, s);
    } catch {
      // already gone
    }
  };
  signal("SIGTERM");
  if (await gone(graceMs)) return;
  signal("SIGKILL");
  if (!(await gone(5000))) throw new Error(`process ${pid} is still running after SIGKILL`);
}

/**
 * The process listening on TCP `port` of 127.0.0.1 (or any address), from iproute2's `ss`, or
 * undefined when nothing listens there or it cannot be told (no `ss`, or another user's process
 * while not root). Never throws.
 */
export async function portHolder(port: number): Promise<ProcessInfo | undefined> {
  let out: string;
  try {
    ({ stdout: out } = await execFileAsync("ss", ["-Hltnp", `sport = :${port}`], { timeout: 10_000 }));
  } catch {
    return undefined;
  }
  const pid = Number(/\bpid=(\d+)/.exec(out)?.[1]);
  if (!pid) return undefined;
  return processInfo(pid) ?? { pid, command: "", startTicks: 0 };
}

/** "pid 1234 (temporal server start-dev …)": a process named for an error message. */
export function describeProcess(p: ProcessInfo): string {
  const command = p.command.length > 160 ? `${p.command.slice(0, 159)}…` : p.command;
  return command ? `pid ${p.pid} (${command})` : `pid ${p.pid}`;
}
