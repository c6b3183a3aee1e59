/** Runs the worker's process entry (src/main.ts) as a child process, to kill it hard (SIGKILL). */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const WORKER_DIR = fileURLToPath(new URL("../..", import.meta.url));

export interface WorkerProcess {
  child: ChildProcess;
  /** SIGKILL: no graceful shutdown, running activities die with it. Resolves on exit. */
  kill(): Promise<void>;
  /** SIGTERM (graceful) and wait for exit; resolves with the exit code. */
  stop(): Promise<number | null>;
}

/** Starts `src/main.ts` with `env` and resolves once it logged `event:"ready"`. */
export async function startWorkerProcess(
  env: Record<string, string>,
  timeoutMs = 120_000,
): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ["--no-node-snapshot", "--import", "tsx", "src/main.ts"], {
    cwd: WORKER_DIR,
    env: { ...process.env, WORKER_METRICS_ADDR: "127.0.0.1:0", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<number | null>((resolve) => child.once("exit", (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(
      () => reject(new Error(`worker did not become ready: ${output.slice(-2000)}`)),
      timeoutMs,
    );
    const onData = (d: Buffer) => {
      output = (output + d.toString()).slice(-8000);
      if (output.includes('"event":"ready"')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", (d: Buffer) => {
      output = (output + d.toString()).slice(-8000);
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`worker exited with ${code} before ready: ${output.slice(-2000)}`));
    });
  });
  return {
    child,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
      return exited;
    },
  };
}
