/**
 * ExecuteCodeRequest.execution_id through the real kernel, sandbox and MCP gatekeeper: a snippet
 * runs at most once per id (the built-in agent's retried activities depend on it). Each run is
 * counted in the workspace stream: CodeExecutionStarted (the claim), CodeExecuted, and the
 * observations the snippet's reads recorded.
 */
import assert from "node:assert/strict";
import { createHash } from "node:crypto";
import { after, before, describe, test } from "node:test";
import { CodeExecutionStarted, type ExecuteResult } from "@gatehouse/proto";
import type { ServiceError } from "@grpc/grpc-js";
import { type Harness, returned, startHarness, unary } from "../support/harness.ts";

let h: Harness;
before(async () => {
  h = await startHarness();
});
after(async () => {
  await h.close();
});

/** A read (one observation) returning a random number: a second run would differ. */
const READ_RANDOM = `export default async (env: any) => {
  await env.MEMORY.read_graph({});
  return Math.random();
};`;

function execWithId(ws: string, code: string, executionId: string): Promise<ExecuteResult> {
  return unary(h.kernel, h.kernel.executeCode, {
    workspaceId: ws,
    code,
    caller: { kind: "agent", id: "chat-1" },
    limits: { wallTimeMs: 60_000, heapMb: 0, outputBytes: 0 },
    executionId,
  });
}

/** Per type, how many events of the stream name `executionId` (or all of them with ""). */
async function counts(ws: string, executionId = "") {
  const events = await h.stack.store.readStream(`workspace-${ws}`);
  const mine = (e: { data: unknown }) =>
    !executionId || (e.data as { executionId?: string }).executionId === executionId;
  const n = (type: string) => events.filter((e) => e.type === type && mine(e)).length;
  return {
    started: n("CodeExecutionStarted"),
    executed: n("CodeExecuted"),
    observations: n("ObservationRecorded"),
  };
}

describe("execution_id: a snippet runs at most once per id", () => {
  test("the same id twice runs once: the second call gets the first's result", async () => {
    const ws = await h.workspace("mcp://memory");
    const first = await execWithId(ws, READ_RANDOM, "turn-a.1.0");
    const second = await execWithId(ws, READ_RANDOM, "turn-a.1.0");
    assert.equal(first.executionId, "turn-a.1.0");
    assert.equal(typeof returned(first), "number");
    assert.equal(second.returnJson, first.returnJson);
    assert.deepEqual(second.observed, first.observed);
    assert.deepEqual(await counts(ws), { started: 1, executed: 1, observations: 1 });
  });

  test("a concurrent repeat joins the run in progress", async () => {
    const ws = await h.workspace("mcp://memory");
    const slow = `export default async (env: any) => {
      await env.MEMORY.read_graph({});
      const until = Date.now() + 1500;
      while (Date.now() < until) {} // the sandbox has no timers: hold the run busy
      return Math.random();
    };`;
    const [a, b, c] = await Promise.all([
      execWithId(ws, slow, "turn-b.1.0"),
      execWithId(ws, slow, "turn-b.1.0"),
      execWithId(ws, slow, "turn-b.1.0"),
    ]);
    assert.equal(typeof returned(a), "number");
    assert.equal(b.returnJson, a.returnJson);
    assert.equal(c.returnJson, a.returnJson);
    assert.deepEqual(await counts(ws), { started: 1, executed: 1, observations: 1 });
  });

  test("a claim with no result (its kernel stopped) answers ExecutionOutcomeUnknown and never runs", async () => {
    const ws = await h.workspace("mcp://memory");
    await h.stack.store.append(
      `workspace-${ws}`,
      [
        {
          type: "CodeExecutionStarted",
          data: CodeExecutionStarted.toJSON({
            executionId: "turn-c.1.0",
            codeSha256: createHash("sha256").update(READ_RANDOM).digest("hex"),
          }),
          metadata: { actor: "agent:chat-1" },
        },
      ],
      "any",
    );
    const r = await execWithId(ws, READ_RANDOM, "turn-c.1.0");
    assert.equal(r.ok, false);
    assert.equal(r.error?.name, "ExecutionOutcomeUnknown");
    assert.match(r.error?.message ?? "", /turn-c\.1\.0 started earlier .* not run again/);
    assert.deepEqual(await counts(ws), { started: 1, executed: 0, observations: 0 });
  });

  test("an id reused for other code is refused, naming the id", async () => {
    const ws = await h.workspace("mcp://memory");
    returned(await execWithId(ws, READ_RANDOM, "turn-d.1.0"));
    await assert.rejects(
      execWithId(ws, "export default async () => 2", "turn-d.1.0"),
      (err: ServiceError) => {
        assert.match(err.details, /execution_id turn-d\.1\.0 was used for other code/);
        return true;
      },
    );
    assert.deepEqual(await counts(ws), { started: 1, executed: 1, observations: 1 });
  });

  test("a malformed id is refused naming the expected shape; nothing runs", async () => {
    const ws = await h.workspace("mcp://memory");
    await assert.rejects(execWithId(ws, READ_RANDOM, "has space"), (err: ServiceError) => {
      assert.match(err.details, /execution_id must be 1–128 letters, digits or \. _ : -/);
      return true;
    });
    assert.deepEqual(await counts(ws), { started: 0, executed: 0, observations: 0 });
  });

  test("no id: every call runs, each under a fresh id, with no claim event (the old behaviour)", async () => {
    const ws = await h.workspace("mcp://memory");
    const a = await h.exec(ws, READ_RANDOM);
    const b = await h.exec(ws, READ_RANDOM);
    assert.notEqual(a.executionId, b.executionId);
    assert.notEqual(returned(a), returned(b));
    assert.deepEqual(await counts(ws), { started: 0, executed: 2, observations: 2 });
    const executed = (await h.stack.store.readStream(`workspace-${ws}`)).filter(
      (e) => e.type === "CodeExecuted",
    );
    for (const e of executed) assert.equal((e.data as { resultJson?: string }).resultJson ?? "", "");
  });
});
