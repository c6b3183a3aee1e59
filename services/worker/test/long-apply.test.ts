/**
 * Applies that take long, against the REAL MCP gatekeeper process (services/gatekeeper-mcp) and a
 * REAL MCP server whose write waits until the test releases it (an SDK-built stdio fixture), with
 * the real worker and a real Temporal dev server:
 * - a call still in flight keeps the apply alive by heartbeats and ends with its real result;
 * - a gatekeeper killed, or frozen, mid-call is a lost call: "outcome unknown";
 * - the MCP server killed mid-call ends the apply within seconds as "outcome unknown";
 * - the per-gatekeeper maximum (GATEKEEPER_APPLY_MAX, here seconds) ends the wait with an honest
 *   "may still be running" — also outcome unknown.
 * The write reaches the server exactly once in every case.
 */
import assert from "node:assert/strict";
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { after, before, describe, test } from "node:test";
import { decide } from "@gatehouse/approval-core";
import { bindingRunWorkflowId } from "@gatehouse/approval-core/lifecycle-contract";
import { ActionStatus, Delivery, ResourceIntroduced, WorkspaceCreated } from "@gatehouse/proto";
import { waitUntil } from "@gatehouse/service-kit";
import type { WorkflowHandle } from "@temporalio/client";
import { type LifecycleWorker, startLifecycleWorker } from "../src/index.ts";
import { projected } from "./support/assertions.ts";
import { approve, outcome, uniqueId } from "./support/driver.ts";
import { type Fixture, quietLogger, startFixture } from "./support/fixture.ts";
import { type GatekeeperProcess, startMcpGatekeeperProcess } from "./support/mcp-gatekeeper-process.ts";
import { description } from "./support/workspace.ts";

describe("long applies through the real MCP gatekeeper", () => {
  let f: Fixture;
  let dir: string;
  const gatekeepers: GatekeeperProcess[] = [];
  const workers: LifecycleWorker[] = [];

  before(async () => {
    f = await startFixture({ worker: false });
    dir = mkdtempSync(join(tmpdir(), "gatehouse-long-apply-"));
  });
  after(async () => {
    for (const label of ["long", "killed", "frozen", "bounded"])
      writeFileSync(join(dir, `release-${label}`), "");
    for (const g of gatekeepers) {
      if (g.child.signalCode === null && g.child.exitCode === null) g.child.kill("SIGCONT");
      await g.kill("SIGTERM");
    }
    for (const w of workers) await w.close();
    await f?.close();
    rmSync(dir, { recursive: true, force: true });
  });

  /** A gatekeeper process and a worker on its own task queue that reaches it. */
  async function stack(
    applyMaxMs?: Record<string, number>,
  ): Promise<{ gk: GatekeeperProcess; queue: string }> {
    const gk = await startMcpGatekeeperProcess(dir);
    gatekeepers.push(gk);
    const queue = uniqueId("q");
    workers.push(
      await startLifecycleWorker({
        store: f.store,
        temporal: { address: f.env.address },
        gatekeepers: { mcp: gk.address },
        ...(applyMaxMs ? { applyMaxMs } : {}),
        logger: quietLogger,
        workflowBundle: f.bundle,
        taskQueue: queue,
      }),
    );
    return { gk, queue };
  }

  /** A workspace with binding SLOW (mcp://slow) and one pending `slow_write {label}`; approved. */
  async function approvedWrite(
    label: string,
    queue: string,
  ): Promise<{
    ws: string;
    id: number;
    handle: WorkflowHandle;
    result(): Promise<import("@gatehouse/approval-core/lifecycle-contract").DecisionOutcome>;
  }> {
    const ws = uniqueId("w");
    await f.store.append(
      `workspace-${ws}`,
      [
        {
          type: "WorkspaceCreated",
          data: WorkspaceCreated.toJSON({ workspaceId: ws, name: ws, owner: "" }),
          metadata: { actor: "service:kernel" },
        },
        {
          type: "ResourceIntroduced",
          data: ResourceIntroduced.toJSON({
            binding: "SLOW",
            url: "mcp://slow",
            gatekeeper: "mcp",
            trust: "vetted",
            dts: "",
            methods: ["slow_write"],
            actionKinds: undefined,
          }),
          metadata: { actor: "user:alice" },
        },
      ],
      "no_stream",
    );
    const { events } = await f.streams.execute(ws, (s) =>
      decide(
        {
          type: "SubmitAction",
          binding: "SLOW",
          localId: label,
          description: description({ delivery: Delivery.DELIVERY_AWAIT }),
          payloadJson: JSON.stringify({ tool: "slow_write", arguments: { label } }),
          executionId: "exec-1",
        },
        s,
      ),
    );
    const id = events[0]!.revision;
    const e = { client: f.env.client, streams: f.streams, taskQueue: queue };
    await approve(e, ws, [id]);
    const handle = f.env.client.workflow.getHandle(bindingRunWorkflowId(ws, "SLOW"));
    return { ws, id, handle, result: () => outcome(e, ws, id, 120_000) };
  }

  const calls = () =>
    existsSync(join(dir, "calls.log")) ? readFileSync(join(dir, "calls.log"), "utf8") : "";
  const started = (label: string) =>
    calls()
      .split("\n")
      .filter((l) => l === `started ${label}`).length;

  /** The `gatekeeperRunningMs` of the run activity's last heartbeat, if it is running. */
  async function heartbeatRunningMs(handle: WorkflowHandle): Promise<number | undefined> {
    const { raw } = await handle.describe();
    const payload = raw.pendingActivities?.[0]?.heartbeatDetails?.payloads?.[0];
    if (!payload?.data) return undefined;
    const details = JSON.parse(Buffer.from(payload.data).toString("utf8")) as {
      gatekeeperRunningMs?: number;
    };
    return details.gatekeeperRunningMs;
  }

  test("a write still running past the heartbeat timeout and the grace is kept alive and recorded as applied with its result", async () => {
    const { queue } = await stack();
    const { ws, id, handle, result } = await approvedWrite("long", queue);
    await waitUntil("the tool call to start", () => started("long") === 1);
    // The gatekeeper reports the call running and the activity heartbeats it, well past the 5 s
    // heartbeat timeout and the applier's 10 s silence grace.
    await waitUntil(
      "12 s of running in the heartbeats",
      async () => ((await heartbeatRunningMs(handle)) ?? 0) >= 12_000,
      {
        intervalMs: 250,
      },
    );
    writeFileSync(join(dir, "release-long"), "");
    const final = await result();
    assert.equal(final.status, "applied", final.reason);
    const a = await projected(f.store, ws, id);
    assert.equal(a.status, ActionStatus.ACTION_STATUS_APPLIED);
    assert.match(a.resultJson, /wrote long/);
    assert.equal(started("long"), 1, "the write reached the server once");
  });

  test("a gatekeeper killed mid-call is a lost call: outcome unknown, never sent again", async () => {
    const { gk, queue } = await stack();
    const { ws, id, result } = await approvedWrite("killed", queue);
    await waitUntil("the tool call to start", () => started("killed") === 1);
    await gk.kill("SIGKILL");
    const final = await result();
    assert.equal(final.status, "failed");
    assert.equal(final.outcomeUnknown, true);
    const a = await projected(f.store, ws, id);
    assert.equal(a.outcomeUnknown, true);
    assert.match(a.reason, /UNAVAILABLE|ended without an outcome/);
    assert.match(a.reason, /the outcome is unknown/);
    assert.equal(started("killed"), 1);
  });

  test("the MCP server killed mid-call (the gatekeeper alive) ends the apply within seconds: failed, outcome unknown", async () => {
    const { queue } = await stack();
    const { ws, id, result } = await approvedWrite("server-killed", queue);
    await waitUntil("the tool call to start", () => started("server-killed") === 1);
    const killedAt = Date.now();
    process.kill(Number(readFileSync(join(dir, "pid-server-killed"), "utf8")), "SIGKILL");
    const final = await result();
    const elapsed = Date.now() - killedAt;
    console.log(`MCP server killed mid-call: the action left applying ${elapsed} ms after the kill`);
    assert.equal(final.status, "failed");
    assert.equal(final.outcomeUnknown, true);
    assert.ok(elapsed < 15_000, `left applying ${elapsed} ms after the kill, well under 30 s`);
    const a = await projected(f.store, ws, id);
    assert.equal(a.outcomeUnknown, true);
    assert.match(
      a.reason,
      /calling slow_write at stdio server "slow": the connection closed before the answer came/,
    );
    assert.match(a.reason, /the outcome is unknown/);
    assert.equal(started("server-killed"), 1, "never sent again");
  });

  test("a gatekeeper frozen mid-call (no more running messages) is a lost call: outcome unknown", async () => {
    const { gk, queue } = await stack();
    const { ws, id, result } = await approvedWrite("frozen", queue);
    await waitUntil("the tool call to start", () => started("frozen") === 1);
    await gk.kill("SIGSTOP");
    const final = await result();
    assert.equal(final.status, "failed");
    assert.equal(final.outcomeUnknown, true);
    const a = await projected(f.store, ws, id);
    // "on the run" since applies go through ApplyActions (a run of one here).
    assert.match(a.reason, /stopped reporting on the (call|run) \(nothing for 12 s\); the call was lost/);
    assert.match(a.reason, /the outcome is unknown/);
    gk.child.kill("SIGCONT");
    assert.equal(started("frozen"), 1);
  });

  test("the per-gatekeeper maximum ends the wait: failed, outcome unknown, and it says the call may still be running", async () => {
    const { queue } = await stack({ mcp: 3000 });
    const { ws, id, result } = await approvedWrite("bounded", queue);
    const final = await result();
    assert.equal(final.status, "failed");
    assert.equal(final.outcomeUnknown, true);
    const a = await projected(f.store, ws, id);
    assert.equal(a.outcomeUnknown, true);
    // Through ApplyActions the maximum is also sent to the gatekeeper (gatehouse-apply-max-ms), which
    // may end the call itself first and say so; either way the words say it may have happened.
    assert.match(
      a.reason,
      /still performing it after 3 s, the longest GATEKEEPER_APPLY_MAX lets the worker wait for "mcp"; the call may still be running|calling slow_write at stdio server "slow": no answer came in time \[RequestTimeout\]; the request may have reached the system, so the outcome is unknown/,
    );
    assert.equal(started("bounded"), 1, "the write was sent once and not again");
  });
});
