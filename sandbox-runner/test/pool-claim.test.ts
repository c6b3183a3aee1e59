/**
 * The pool's claim step (SandboxInstance.claim, the Kubernetes backend's label patch): it runs beside the
 * workspace's first execution; a refused claim drops the sandbox and the next task gets another one.
 * Real isolate host processes (process backend, isolate only) with a claim that the test controls.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import pino from "pino";
import { ensureIsolateHost } from "../src/isolate-host-path.ts";
import { createMetrics } from "../src/metrics.ts";
import type { SandboxBackend } from "../src/pool/backend.ts";
import { DEFAULT_POOL_OPTIONS } from "../src/pool/options.ts";
import { SandboxPool } from "../src/pool/pool.ts";
import { createProcessBackend } from "../src/pool/process-backend.ts";

test("a refused claim drops the sandbox; the workspace's next task runs on a fresh one", async () => {
  const inner = createProcessBackend(await ensureIsolateHost(), { isolation: "none", warning: "test" });
  const claims: string[] = [];
  let refuse = true;
  const backend: SandboxBackend = {
    ...inner,
    async start(id) {
      const instance = await inner.start(id);
      return {
        ...instance,
        get pid() {
          return instance.pid;
        },
        claim: async (workspaceId: string) => {
          claims.push(`${id}:${workspaceId}`);
          if (refuse) throw new Error("the pod is no longer this runner's warm pod");
        },
      };
    },
  };
  const metrics = createMetrics();
  const pool = new SandboxPool(
    backend,
    { ...DEFAULT_POOL_OPTIONS, warm: 1 },
    pino({ level: "silent" }),
    metrics,
  );
  pool.start();
  try {
    await pool.whenWarm(60_000);
    const first = await pool.run("ws-1", async (sandbox) => {
      await new Promise<void>((resolve) => sandbox.onExit(() => resolve()));
      return sandbox.id;
    });
    assert.equal(claims.length, 1);
    assert.match(
      await metrics.registry.metrics(),
      /gatehouse_sandbox_pool_events_total\{event="claim_failed"\} 1/,
    );
    refuse = false;
    const second = await pool.run("ws-1", async (sandbox) => sandbox.id);
    assert.notEqual(second, first);
    assert.equal(claims.length, 2);
    assert.equal(pool.describe().find((s) => s.workspaceId === "ws-1")?.id, second);
  } finally {
    await pool.close();
  }
});
