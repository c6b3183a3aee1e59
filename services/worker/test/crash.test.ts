/**
 * At-most-once apply across a worker crash: the worker runs as its own process (src/main.ts) and
 * reaches the gatekeeper over gRPC; it is killed (SIGKILL) while the gatekeeper holds ApplyAction.
 * A new worker process must finish the action as applied or "outcome unknown" — never a second call.
 * The action is applied through its binding's run (one ApplyActions call over gRPC).
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { ActionStatus } from "@gatehouse/proto";
import { eventTypesOf, projected } from "./support/assertions.ts";
import { approve, outcome, uniqueId } from "./support/driver.ts";
import { type Fixture, startFixture } from "./support/fixture.ts";
import { serveGatekeeper } from "./support/grpc-gatekeeper.ts";
import { startWorkerProcess, type WorkerProcess } from "./support/worker-process.ts";
import { seedWorkspace, submit } from "./support/workspace.ts";

describe("worker crash during apply", () => {
  let f: Fixture;
  let gk: { address: string; close(): Promise<void> };
  const processes: WorkerProcess[] = [];
  before(async () => {
    f = await startFixture({ worker: false });
    gk = await serveGatekeeper(f.gatekeeper);
  });
  after(async () => {
    f?.gatekeeper.release();
    for (const p of processes) await p.kill();
    await gk?.close();
    await f?.close();
  });

  test("killing the worker between ActionApplying and the gatekeeper's answer never applies twice", async () => {
    const env = {
      TEMPORAL_ADDRESS: f.env.address,
      GATEHOUSE_DATA_DIR: f.dir,
      GATEKEEPER_ADDRESSES: `mcp=${gk.address}`,
    };
    const ws = uniqueId("w");
    await seedWorkspace(f.store, ws);
    const id = await submit(f.streams, ws, "a1");
    const first = await startWorkerProcess(env);
    processes.push(first);
    const e = { client: f.env.client, streams: f.streams };
    f.gatekeeper.block();
    await approve(e, ws, [id]);
    await f.gatekeeper.waitForApplies(1);
    assert.deepEqual(await eventTypesOf(f.store, ws, id), [
      "ActionSubmitted",
      "ActionApproved",
      "ActionApplying",
    ]);

    await first.kill();
    f.gatekeeper.release(); // the external system finishes the write; its answer goes nowhere

    const second = await startWorkerProcess(env);
    processes.push(second);
    const final = await outcome(e, ws, id);
    assert.equal(f.gatekeeper.appliesOf(ws, id), 1, "exactly one ApplyAction reached the gatekeeper");
    const p = await projected(f.store, ws, id);
    if (final.status === "applied") {
      assert.equal(p.status, ActionStatus.ACTION_STATUS_APPLIED);
    } else {
      assert.equal(final.status, "failed");
      assert.equal(final.outcomeUnknown, true);
      assert.equal(p.status, ActionStatus.ACTION_STATUS_FAILED);
      assert.equal(p.outcomeUnknown, true);
      assert.match(p.reason, /outcome is unknown/);
    }
    const types = await eventTypesOf(f.store, ws, id);
    assert.equal(types.filter((t) => t === "ActionApplying").length, 1, "one claim");
    assert.equal(await second.stop(), 0, "the new worker shuts down gracefully on SIGTERM");
  });
});
