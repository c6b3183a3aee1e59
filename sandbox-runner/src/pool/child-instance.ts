import type { ChildProcessWithoutNullStreams } from "node:child_process";
import { constants } from "node:os";
import { type SandboxExit, type SandboxInstance, signalFromExitCode } from "./backend.ts";

const STDERR_TAIL = 2048;

/**
 * Adapts a child process whose stdio is the isolate host's (a `runsc run` process, or the isolate host
 * itself) to a SandboxInstance. The exit notification fires once, on the child's "close" (or "error"
 * when it could not be spawned); an exit code 128 + n is reported as signal n.
 */
export function childInstance(
  id: string,
  child: ChildProcessWithoutNullStreams,
  destroy: () => Promise<void>,
): SandboxInstance & { setPid(pid: number | null): void } {
  let pid: number | null = child.pid ?? null;
  let stderrTail = "";
  let exit: SandboxExit | null = null;
  const exitListeners: Array<(exit: SandboxExit) => void> = [];
  const notify = (e: SandboxExit) => {
    if (exit) return;
    exit = e;
    for (const listener of exitListeners.splice(0)) listener(e);
  };
  child.stdin.on("error", () => undefined); // EPIPE after the process died; "close" reports it
  child.stdout.setEncoding("utf8");
  child.stderr.setEncoding("utf8");
  child.stderr.on("data", (chunk: string) => {
    stderrTail = (stderrTail + chunk).slice(-STDERR_TAIL);
  });
  child.on("error", (error) =>
    notify({ code: null, signal: null, stderrTail: `${stderrTail}\n${error.message}`.slice(-STDERR_TAIL) }),
  );
  child.on("close", (code, signal) =>
    notify({
      code: signal ? null : code,
      signal: signal ?? signalFromExitCode(code, constants.signals as unknown as Record<string, number>),
      stderrTail,
    }),
  );
  return {
    id,
    get pid() {
      return pid;
    },
    setPid(value) {
      pid = value;
    },
    write(text) {
      if (!exit && child.stdin.writable) child.stdin.write(text);
    },
    onData(listener) {
      child.stdout.on("data", listener);
    },
    onExit(listener) {
      if (exit) listener(exit);
      else exitListeners.push(listener);
    },
    destroy,
  };
}
