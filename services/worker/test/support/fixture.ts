/** One test file's world: a real Temporal dev server, a real SQLite store, a RecordingGatekeeper, one worker. */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { WorkspaceStreams } from "@gatehouse/approval-core";
import { type EventStore, openSqliteEventStore } from "@gatehouse/event-store";
import type { TestWorkflowEnvironment } from "@temporalio/testing";
import pino from "pino";
import { bundleLifecycleWorkflows, type LifecycleWorker, startLifecycleWorker } from "../../src/index.ts";
import { RecordingGatekeeper } from "./recording-gatekeeper.ts";
import { startTestTemporal } from "./temporal.ts";

export interface Fixture {
  env: TestWorkflowEnvironment;
  dir: string;
  store: EventStore;
  /** A WorkspaceStreams of the test (separate cache from the worker's, same store). */
  streams: WorkspaceStreams;
  gatekeeper: RecordingGatekeeper;
  bundle: { code: string };
  worker: LifecycleWorker;
  /** Starts another worker on `taskQueue` over the same store and gatekeeper. */
  startWorker(taskQueue?: string): Promise<LifecycleWorker>;
  close(): Promise<void>;
}

export const quietLogger = pino({ level: process.env.TEST_LOG_LEVEL ?? "silent" });

export async function startFixture(options: { worker?: boolean } = {}): Promise<Fixture> {
  const [env, bundle] = await Promise.all([startTestTemporal(), bundleLifecycleWorkflows()]);
  const dir = mkdtempSync(join(tmpdir(), "gatehouse-worker-"));
  const store = openSqliteEventStore(join(dir, "events.sqlite"), { pollIntervalMs: 10 });
  const gatekeeper = new RecordingGatekeeper();
  const workers: LifecycleWorker[] = [];
  const startWorker = async (taskQueue?: string) => {
    const w = await startLifecycleWorker({
      store,
      temporal: { address: env.address },
      gatekeepers: gatekeeper,
      logger: quietLogger,
      workflowBundle: bundle,
      ...(taskQueue ? { taskQueue } : {}),
    });
    workers.push(w);
    return w;
  };
  const worker = options.worker === false ? (undefined as unknown as LifecycleWorker) : await startWorker();
  return {
    env,
    dir,
    store,
    streams: new WorkspaceStreams(store),
    gatekeeper,
    bundle,
    worker,
    startWorker,
    async close() {
      gatekeeper.release();
      for (const w of workers) await w.close();
      await env.teardown();
      await store.close();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
