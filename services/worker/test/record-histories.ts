/**
 * Re-records the workflow histories the replay test checks (`npm run record-histories -w @gatehouse/worker`):
 * runs representative scenarios on a fresh Temporal dev server and saves each workflow's history as
 * JSON under test/histories/. Re-record only on purpose (a deliberate, versioned workflow change).
 */
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { decide } from "@gatehouse/approval-core";
import { decideSignal, decideUpdate } from "@gatehouse/approval-core/lifecycle-contract";
import type { WorkflowHandle } from "@temporalio/client";
import { awaitTurn, startAction, uniqueId } from "./support/driver.ts";
import { startFixture } from "./support/fixture.ts";
import { seedWorkspace, submit } from "./support/workspace.ts";

const OUT = fileURLToPath(new URL("./histories/", import.meta.url));
const alice = { kind: "approve" as const, decidedBy: "user:alice" };

const f = await startFixture();
const saved: string[] = [];
async function save(name: string, handle: WorkflowHandle): Promise<void> {
  await handle.result().catch(() => undefined);
  const history = await handle.fetchHistory();
  // The protobuf message's own toJSON (camelCase, enum names, base64 payloads) reads back with historyFromJSON.
  writeFileSync(join(OUT, `${name}.json`), `${JSON.stringify(history)}\n`);
  saved.push(name);
}
async function workspace(): Promise<string> {
  const ws = uniqueId("w");
  await seedWorkspace(f.store, ws);
  return ws;
}

try {
  mkdirSync(OUT, { recursive: true });
  for (const file of readdirSync(OUT)) if (file.endsWith(".json")) rmSync(join(OUT, file));

  {
    const ws = await workspace();
    const id = await submit(f.streams, ws, "a1");
    const h = await startAction(f.env.client, ws, id);
    await h.executeUpdate(decideUpdate, { args: [alice] });
    await save("action-approved-applied", h);
  }
  {
    const ws = await workspace();
    const a1 = await submit(f.streams, ws, "a1");
    const a2 = await submit(f.streams, ws, "a2", { dependsOn: ["a1"] });
    const h1 = await startAction(f.env.client, ws, a1);
    const h2 = await startAction(f.env.client, ws, a2);
    await h2.executeUpdate(decideUpdate, { args: [alice] }).catch(() => undefined); // refused: a1 undecided
    await h1.executeUpdate(decideUpdate, { args: [{ kind: "reject", decidedBy: "user:bob", reason: "no" }] });
    await save("action-rejected-cascading", h1);
    await save("action-cascaded", h2);
  }
  {
    const ws = await workspace();
    const id = await submit(f.streams, ws, "a1");
    const h = await startAction(f.env.client, ws, id, { ttlMs: 500 });
    await save("action-expired", h);
  }
  {
    const ws = await workspace();
    const id = await submit(f.streams, ws, "a1");
    f.gatekeeper.answers.set(`${ws}/${id}`, { ok: false, resultJson: "", error: "conflict" });
    const h = await startAction(f.env.client, ws, id);
    await h.signal(decideSignal, alice);
    await save("action-signalled-apply-failed", h);
  }
  {
    // A claim left by a worker that died: the workflow finds APPLYING and records "outcome unknown".
    const ws = await workspace();
    const id = await submit(f.streams, ws, "a1");
    await f.streams.execute(ws, (s) =>
      decide({ type: "Approve", actionIds: [id], decidedBy: "user:alice", includeDependencies: false }, s),
    );
    await f.streams.execute(ws, (s) =>
      decide({ type: "ClaimApply", actionId: id, claimedBy: "gone/attempt-1" }, s),
    );
    const h = await startAction(f.env.client, ws, id);
    await save("action-claim-outcome-unknown", h);
  }
  {
    const ws = await workspace();
    const turnId = uniqueId("exec");
    const a1 = await submit(f.streams, ws, "a1", { await: true, executionId: turnId });
    const a2 = await submit(f.streams, ws, "a2", { await: true, executionId: turnId });
    const h1 = await startAction(f.env.client, ws, a1);
    const h2 = await startAction(f.env.client, ws, a2);
    await h1.executeUpdate(decideUpdate, { args: [alice] });
    const turn = await awaitTurn(f.env.client, ws, turnId, [a1, a2]);
    await h2.executeUpdate(decideUpdate, { args: [alice] });
    await save("action-awaited-applied", h2);
    await save("turn-resumed", turn);
  }
  {
    const ws = await workspace();
    const turnId = uniqueId("exec");
    const a1 = await submit(f.streams, ws, "a1", { await: true, executionId: turnId });
    const a2 = await submit(f.streams, ws, "a2", { await: true, executionId: turnId });
    await startAction(f.env.client, ws, a1);
    const h2 = await startAction(f.env.client, ws, a2);
    const turn = await awaitTurn(f.env.client, ws, turnId, [a1, a2]);
    await h2.executeUpdate(decideUpdate, { args: [{ kind: "reject", decidedBy: "user:bob", reason: "no" }] });
    await save("turn-completed", turn);
  }
  console.log(`recorded ${saved.length} histories in ${OUT}: ${saved.join(", ")}`);
} finally {
  await f.close();
}
