/**
 * Pid files for the child processes a service starts (`gatehouse dev`: `<data dir>/temporal.pid`),
 * so that a start after a crash finds a leftover child and stops it — only when it is provably
 * the one the file was written for: same pid, same start time, and a command line the caller
 * recognises.
 */
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { type ProcessInfo, processInfo, stopProcess } from "./child-processes.ts";

/** The content of a pid file (JSON). */
export interface PidFileRecord {
  pid: number;
  /** Start time in clock ticks since boot (0 when unknown): tells a reused pid apart. */
  startTicks: number;
  /** The command line when the file was written. */
  command: string;
}

function read(file: string): PidFileRecord | undefined {
  try {
    const r = JSON.parse(readFileSync(file, "utf8")) as Partial<PidFileRecord>;
    return typeof r.pid === "number"
      ? { pid: r.pid, startTicks: r.startTicks ?? 0, command: r.command ?? "" }
      : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Writes `file` for the running process `pid` (its command line and start time read now).
 * @throws Error when the file cannot be written.
 */
export function writePidFile(file: string, pid: number): void {
  const info = processInfo(pid);
  const record: PidFileRecord = { pid, startTicks: info?.startTicks ?? 0, command: info?.command ?? "" };
  writeFileSync(file, `${JSON.stringify(record)}\n`);
}

/** Removes `file` if it names `pid` (another start may have replaced it). Never throws. */
export function removePidFile(file: string, pid: number): void {
  if (read(file)?.pid === pid) rmSync(file, { force: true });
}

/**
 * The process `file` names, when it still runs as the same process (same start time) and
 * `isOurs(its command line)` says it is the kind of process the file is for; else undefined.
 */
export function leftoverOf(file: string, isOurs: (command: string) => boolean): ProcessInfo | undefined {
  const record = read(file);
  if (!record) return undefined;
  const now = processInfo(record.pid);
  if (!now) return undefined;
  if (record.startTicks && now.startTicks && record.startTicks !== now.startTicks) return undefined;
  return isOurs(now.command || record.command) ? now : undefined;
}

/**
 * Stops the leftover `file` names (see `leftoverOf`: SIGTERM, then SIGKILL after `graceMs`), then
 * removes the file — also when it named nothing alive, or a process that is not ours (left alone).
 * @returns the process that was stopped, or undefined.
 * @throws Error when the leftover survives SIGKILL.
 */
export async function reapPidFile(
  file: string,
  isOurs: (command: string) => boolean,
  graceMs = 5000,
): Promise<ProcessInfo | undefined> {
  const leftover = leftoverOf(file, isOurs);
  if (leftover) await stopProcess(leftover.pid, graceMs);
  rmSync(file, { force: true });
  return leftover;
}
