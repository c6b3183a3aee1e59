/**
 * The real lifecycle worker (services/worker/src/main.ts) as a child process — a separate process
 * because a service may not import another service. Ready once its pollers reached Temporal.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { resolve } from "node:path";
import { LIFECYCLE_TASK_QUEUE } from "@gatehouse/approval-core/lifecycle-contract";
import { freePort } from "@gatehouse/temporal-dev";
import { Client, Connection } from "@temporalio/client";

const ROOT = resolve(import.meta.dirname, "../../..");

/** Where the worker runs its activities. */
export interface WorkerEnv {
  temporalAddress: string;
  /** Directory holding events.sqlite (shared with the approval service). */
  dataDir: string;
  /** EVENT_STORE_URL of the worker (default: the SQLite store in `dataDir`). */
  eventStoreUrl?: string;
  /** "kind=host:port,..." */
  gatekeeperAddresses: string;
}

export class WorkerProcess {
  private child: ChildProcess | undefined;
  private output = "";

  constructor(private readonly env: WorkerEnv) {}

  /** Spawns the worker and waits until it polls the lifecycle task queue (default 90 s). */
  async start(timeoutMs = 90_000): Promise<void> {
    const spawnedAt = Date.now();
    this.output = "";
    const child = spawn(
      process.execPath,
      ["--no-node-snapshot", "--import", "tsx", "services/worker/src/main.ts"],
      {
        cwd: ROOT,
        env: {
          ...process.env,
          TEMPORAL_ADDRESS: this.env.temporalAddress,
          GATEHOUSE_DATA_DIR: this.env.dataDir,
          ...(this.env.eventStoreUrl ? { EVENT_STORE_URL: this.env.eventStoreUrl } : {}),
          GATEKEEPER_ADDRESSES: this.env.gatekeeperAddresses,
          WORKER_METRICS_ADDR: `127.0.0.1:${await freePort()}`,
          LOG_LEVEL: process.env.WORKER_LOG_LEVEL ?? "warn",
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    this.child = child;
    const keep = (d: Buffer) => {
      this.output = (this.output + d.toString()).slice(-8000);
      if (process.env.WORKER_LOG_LEVEL) process.stderr.write(d);
    };
    child.stdout?.on("data", keep);
    child.stderr?.on("data", keep);
    const connection = await Connection.connect({ address: this.env.temporalAddress });
    try {
      const client = new Client({ connection });
      const deadline = Date.now() + timeoutMs;
      while (!(await this.polling(client, spawnedAt))) {
        if (child.exitCode !== null) {
          throw new Error(`the worker exited with code ${child.exitCode}:\n${this.output}`);
        }
        if (Date.now() > deadline) throw new Error(`the worker did not poll in time:\n${this.output}`);
        await new Promise((r) => setTimeout(r, 200));
      }
    } finally {
      await connection.close();
    }
  }

  /** True when both workflow and activity pollers of this process reached the task queue. */
  private async polling(client: Client, since: number): Promise<boolean> {
    for (const taskQueueType of [1, 2]) {
      const res = await client.workflowService.describeTaskQueue({
        namespace: "default",
        taskQueue: { name: LIFECYCLE_TASK_QUEUE, kind: 1 },
        taskQueueType,
      });
      const fresh = (res.pollers ?? []).some(
        (p) => Number(p.lastAccessTime?.seconds ?? 0) * 1000 + (p.lastAccessTime?.nanos ?? 0) / 1e6 >= since,
      );
      if (!fresh) return false;
    }
    return true;
  }

  /** Stops the worker: SIGTERM (graceful) or SIGKILL (a crash). Resolves once it exited. */
  async stop(signal: NodeJS.Signals = "SIGTERM"): Promise<void> {
    const child = this.child;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise<void>((r) => child.once("exit", () => r()));
    child.kill(signal);
    const timer = setTimeout(() => child.kill("SIGKILL"), 10_000);
    await exited;
    clearTimeout(timer);
  }

  /** The last output of the worker (for failure messages). */
  log(): string {
    return this.output;
  }
}
