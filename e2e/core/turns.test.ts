/**
 * Await-decision turns across the real services (kernel, approval, lifecycle worker on a real
 * Temporal dev server, the real memory MCP server): an execution that submits `await` writes
 * suspends its turn; the turn resumes with the results only after every awaited action is approved
 * and applied, and completes with the rejection when one is rejected.
 */
import assert from "node:assert/strict";
import { after, before, test } from "node:test";
import { type Harness, startHarness, unary } from "../support/harness.ts";

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h.close();
});

const twoWrites = (a: string, b: string) => `export default async (env: any) => {
  const first = await env.MEMORY.create_entities({ entities: [{ name: "${a}", entityType: "turn", observations: [] }] });
  const second = await env.MEMORY.create_entities({ entities: [{ name: "${b}", entityType: "turn", observations: [] }] });
  return [first.actionId, second.actionId];
}`;

async function turnOf(ws: string, code: string): Promise<{ turnId: string; ids: number[] }> {
  const r = await h.exec(ws, code);
  assert.equal(r.ok, true, JSON.stringify(r.error));
  assert.ok(r.turnId, "an execution that submitted await actions suspends its turn");
  return { turnId: r.turnId, ids: JSON.parse(r.returnJson) };
}

const getTurn = (ws: string, turnId: string, wait = false) =>
  unary(h.kernel, h.kernel.getTurn, { workspaceId: ws, turnId, wait });

const approve = (ws: string, id: number) =>
  unary(h.decisions, h.decisions.approve, {
    workspaceId: ws,
    actionId: id,
    decidedBy: "user:t",
    includeDependencies: false,
    descriptionDigests: {},
  });

test("a turn with two awaited actions resumes only after both are approved, with their results", async () => {
  const ws = await h.workspace("mcp://memory");
  const { turnId, ids } = await turnOf(ws, twoWrites("TurnA", "TurnB"));
  assert.equal((await getTurn(ws, turnId)).state, "suspended");
  await approve(ws, ids[0]!);
  // An absence ("the turn does not resume yet"): the CLI suite has no handle on the turn's workflow to
  // wait on (services/worker's turn test waits for the handled signal); a short grace, then the check.
  await new Promise((r) => setTimeout(r, 500));
  assert.equal((await getTurn(ws, turnId)).state, "suspended", "one approval is not enough");
  await approve(ws, ids[1]!);
  const turn = await getTurn(ws, turnId, true);
  assert.equal(turn.state, "resumed");
  assert.deepEqual(
    turn.results.map((r) => [r.actionId, r.status]),
    ids.map((id) => [id, "applied"]),
  );
  assert.match(turn.results[0]!.resultJson, /TurnA/);
});

test("one rejection completes the turn with the rejection", async () => {
  const ws = await h.workspace("mcp://memory");
  const { turnId, ids } = await turnOf(ws, twoWrites("TurnC", "TurnD"));
  await unary(h.decisions, h.decisions.reject, {
    workspaceId: ws,
    actionId: ids[1]!,
    decidedBy: "user:t",
    reason: "not D",
  });
  await approve(ws, ids[0]!);
  const turn = await getTurn(ws, turnId, true);
  assert.equal(turn.state, "completed");
  assert.match(turn.reason, /not D/);
  assert.ok(h.memoryState().some((l) => l.includes('"TurnC"')));
  assert.ok(!h.memoryState().some((l) => l.includes('"TurnD"')));
});

test("rejecting an awaited action that another awaited action depends on names the person's reason", async () => {
  const ws = await h.workspace("mcp://memory");
  const { turnId, ids } = await turnOf(
    ws,
    `export default async (env: any) => {
      const root = await env.MEMORY.create_entities({ entities: [{ name: "TurnRoot", entityType: "turn", observations: [] }] });
      const leaf = await env.MEMORY.add_observations({ observations: [{ entityName: "TurnRoot", contents: ["x"] }] }, { dependsOn: [root.actionId] });
      return [root.actionId, leaf.actionId];
    }`,
  );
  await unary(h.decisions, h.decisions.reject, {
    workspaceId: ws,
    actionId: ids[0]!,
    decidedBy: "user:t",
    reason: "no root today",
  });
  const turn = await getTurn(ws, turnId, true);
  assert.equal(turn.state, "completed");
  assert.match(turn.reason, new RegExp(`action ${ids[0]} was rejected: no root today`));
});

test("an unknown turn is NOT_FOUND with the hint that a turn id is an execution id", async () => {
  const ws = await h.workspace();
  await assert.rejects(getTurn(ws, "no-such-turn"), (err: { code: number; details: string }) => {
    return err.code === 5 && /execution id/.test(err.details);
  });
});
