/**
 * Re-records the workflow histories the replay test checks (`npm run record-histories -w @gatehouse/worker`):
 * runs representative scenarios on a fresh Temporal dev server and saves each workflow's history as
 * JSON under test/histories/. Re-record only on purpose (a deliberate, versioned workflow change).
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { decide } from "@gatehouse/approval-core";
import type { WorkflowHandle } from "@temporalio/client";
import {
  approve,
  awaitTurn,
  type Engine,
  expire,
  outcome,
  reject,
  uniqueId,
  wake,
} from "./support/driver.ts";
import { startFixture } from "./support/fixture.ts";
import { seedWorkspace, submit } from "./support/workspace.ts";

const OUT = fileURLToPath(new URL("./histories/", import.meta.url));
/** Binding runs here idle briefly, so they complete and their histories are whole. */
const run = { idleMs: 300 };

const f = await startFixture();
const e: Engine = { client: f.env.client, streams: f.streams };
const saved: string[] = [];
async function save(name: string, handle: WorkflowHandle): Promise<void> {
  await handle.result().catch(() => undefined);
  const history = await handle.fetchHistory();
  // The protobuf message's own toJSON (camelCase, enum names, base64 payloads) reads back with historyFromJSON.
  writeFileSync(join(OUT, `${name}.json`), `${JSON.stringify(history)}\n`);
  saved.push(name);
}
async function workspace(bindings?: string[]): Promise<string> {
  const ws = uniqueId("w");
  await seedWorkspace(f.store, ws, bindings);
  return ws;
}
const handleOf = (ws: string, binding = "MEM") =>
  f.env.client.workflow.getHandle(`binding-run/${ws}/${binding}`);

try {
  mkdirSync(OUT, { recursive: true });
  for (const file of readdirSync(OUT)) if (file.endsWith(".json")) rmSync(join(OUT, file));

  {
    const ws = await workspace();
    const id = await submit(f.streams, ws, "a1");
    await approve(e, ws, [id], { run });
    await save("binding-run-applied", handleOf(ws));
  }
  {
    // Runs of 2, a failure in the middle: its dependent cascades, the rest apply.
    const ws = await workspace();
    const ids = [await submit(f.streams, ws, "a1"), await submit(f.streams, ws, "a2")];
    ids.push(await submit(f.streams, ws, "a3"));
    ids.push(await submit(f.streams, ws, "a4", { dependsOn: ["a3"] }));
    ids.push(await submit(f.streams, ws, "a5"));
    f.gatekeeper.answers.set(`${ws}/${ids[2]}`, { ok: false, resultJson: "", error: "conflict" });
    await approve(e, ws, ids, { run: { ...run, runMax: 2 } });
    await save("binding-run-batch-with-failure", handleOf(ws));
  }
  {
    const ws = await workspace();
    const a1 = await submit(f.streams, ws, "a1");
    await submit(f.streams, ws, "a2", { dependsOn: ["a1"] });
    await wake(e, ws, "MEM", run);
    await reject(e, ws, a1, "no");
    await save("binding-run-announced-rejection", handleOf(ws));
  }
  {
    const ws = await workspace();
    await submit(f.streams, ws, "a1");
    await new Promise((r) => setTimeout(r, 20));
    await wake(e, ws, "MEM", run);
    await expire(e, ws, 10);
    await save("binding-run-announced-expiry", handleOf(ws));
  }
  {
    // A claim left by a worker that died: the run records "outcome unknown".
    const ws = await workspace();
    const id = await submit(f.streams, ws, "a1");
    await f.streams.execute(ws, (s) =>
      decide({ type: "Approve", actionIds: [id], decidedBy: "user:alice", includeDependencies: false }, s),
    );
    await f.streams.execute(ws, (s) =>
      decide({ type: "ClaimApply", actionId: id, claimedBy: "gone/attempt-1" }, s),
    );
    await wake(e, ws, "MEM", run);
    await save("binding-run-claim-outcome-unknown", handleOf(ws));
  }
  {
    // A dependency in another binding: its run wakes this one.
    const ws = await workspace(["MEM", "OTHER"]);
    const a = await submit(f.streams, ws, "a", { binding: "OTHER" });
    await approve(e, ws, [a], { run });
    await outcome(e, ws, a);
    await save("binding-run-other-binding", handleOf(ws, "OTHER"));
  }
  {
    const ws = await workspace();
    const turnId = uniqueId("exec");
    const a1 = await submit(f.streams, ws, "a1", { await: true, executionId: turnId });
    const a2 = await submit(f.streams, ws, "a2", { await: true, executionId: turnId });
    await approve(e, ws, [a1], { run });
    await outcome(e, ws, a1);
    const turn = await awaitTurn(f.env.client, ws, turnId, [a1, a2]);
    await approve(e, ws, [a2], { run });
    await save("binding-run-awaited-applied", handleOf(ws));
    await save("turn-resumed", turn);
  }
  {
    const ws = await workspace();
    const turnId = uniqueId("exec");
    await submit(f.streams, ws, "a1", { await: true, executionId: turnId });
    const a2 = await submit(f.streams, ws, "a2", { await: true, executionId: turnId });
    const a1 = a2 - 1;
    const turn = await awaitTurn(f.env.client, ws, turnId, [a1, a2]);
    await wake(e, ws, "MEM", run);
    await reject(e, ws, a2, "no");
    await save("turn-completed", turn);
  }
  console.log(`recorded ${saved.length} histories in ${OUT}: ${saved.join(", ")}`);
} finally {
  await f.close();
}
