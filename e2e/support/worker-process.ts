/** The worker's process entry (services/worker/src/main.ts) as a child process, for split-mode agent tests. */
import { type ChildProcess, spawn } from "node:child_process";
import { fileURLToPath } from "node:url";

const WORKER_DIR = fileURLToPath(new URL("../../services/worker", import.meta.url));

/** A running worker process. */
export interface WorkerProcess {
  child: ChildProcess;
  /** Its last output (stdout and stderr, at most 8000 characters). */
  output(): string;
  /** SIGKILLs it (when still running) and resolves once it exited. */
  kill(): Promise<void>;
}

/**
 * Starts the worker with `env` over this process's environment (WORKER_METRICS_ADDR 127.0.0.1:0,
 * LOG_LEVEL info unless given); resolves once it logged `event:"ready"` (within 180 s: it bundles its
 * workflows at start, slow on a busy machine).
 * @throws Error with its output when it exits or is not ready in time.
 */
export async function startWorkerProcess(env: Record<string, string>): Promise<WorkerProcess> {
  const child = spawn(process.execPath, ["--no-node-snapshot", "--import", "tsx", "src/main.ts"], {
    cwd: WORKER_DIR,
    env: { ...process.env, WORKER_METRICS_ADDR: "127.0.0.1:0", LOG_LEVEL: "info", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`worker not ready: ${output.slice(-2000)}`)), 180_000);
    const seen = (d: Buffer) => {
      output = (output + d.toString()).slice(-8000);
      if (output.includes('"event":"ready"')) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on("data", seen);
    child.stderr?.on("data", seen);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`worker exited before ready: ${output.slice(-2000)}`));
    });
  });
  return {
    child,
    output: () => output,
    async kill() {
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
      await exited;
    },
  };
}
