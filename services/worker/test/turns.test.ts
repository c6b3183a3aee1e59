/**
 * Await-decision turns on a real Temporal dev server: the turn workflow learns the awaited set from
 * the kernel's signal-with-start and each outcome from the binding runs, in any order, and
 * records TurnResumed / TurnCompleted in the workspace stream.
 */
import assert from "node:assert/strict";
import { after, before, describe, test } from "node:test";
import { TurnCompleted, TurnResumed, TurnSuspended } from "@gatehouse/proto";
import { waitUntil } from "@gatehouse/service-kit";
import type { WorkflowHandle } from "@temporalio/client";
import { approve, awaitTurn, type Engine, outcome, reject, uniqueId } from "./support/driver.ts";
import { type Fixture, startFixture } from "./support/fixture.ts";
import { seedWorkspace, submit } from "./support/workspace.ts";

describe("await-decision turn workflow", () => {
  let f: Fixture;
  before(async () => {
    f = await startFixture();
  });
  after(async () => {
    await f?.close();
  });
  const e = (): Engine => ({ client: f.env.client, streams: f.streams });

  /** A workspace with two awaited actions of turn `turnId`. */
  async function twoAwaited(turnId: string) {
    const ws = uniqueId("w");
    await seedWorkspace(f.store, ws);
    const a1 = await submit(f.streams, ws, "a1", { await: true, executionId: turnId });
    const a2 = await submit(f.streams, ws, "a2", { await: true, executionId: turnId });
    return { ws, a1, a2 };
  }

  /**
   * Resolves once the workflow has received signal `name` and completed a workflow task after it: by then
   * anything the signal makes the workflow do within that task (e.g. record its outcome) is done.
   */
  async function signalHandled(handle: WorkflowHandle, name: string): Promise<void> {
    await waitUntil(`the turn workflow to handle its "${name}" signal`, async () => {
      const events = (await handle.fetchHistory()).events ?? [];
      const signalled = events.findIndex(
        (e) => e.workflowExecutionSignaledEventAttributes?.signalName === name,
      );
      return signalled >= 0 && events.slice(signalled).some((e) => e.workflowTaskCompletedEventAttributes);
    });
  }

  async function turnEvents(ws: string, turnId: string) {
    const events = await f.store.readStream(`workspace-${ws}`);
    return events.filter(
      (e) =>
        (e.type === "TurnResumed" && TurnResumed.fromJSON(e.data).turnId === turnId) ||
        (e.type === "TurnCompleted" && TurnCompleted.fromJSON(e.data).turnId === turnId),
    );
  }

  test("a turn with two awaited actions resumes only after both are applied, with both results", async () => {
    const turnId = uniqueId("exec");
    const { ws, a1, a2 } = await twoAwaited(turnId);
    const turn = await awaitTurn(f.env.client, ws, turnId, [a1, a2]);
    await approve(e(), ws, [a1]);
    await outcome(e(), ws, a1);
    await signalHandled(turn, "actionsDecided");
    assert.equal((await turn.describe()).status.name, "RUNNING", "still waiting for the second action");
    assert.equal((await turnEvents(ws, turnId)).length, 0);
    await approve(e(), ws, [a2]);
    const ended = await turn.result();
    assert.equal(ended.state, "resumed");
    assert.deepEqual(
      ended.results.map((r) => [r.actionId, r.status, r.resultJson]),
      [
        [a1, "applied", JSON.stringify({ applied: a1 })],
        [a2, "applied", JSON.stringify({ applied: a2 })],
      ],
    );
    const events = await turnEvents(ws, turnId);
    assert.deepEqual(
      events.map((e) => e.type),
      ["TurnResumed"],
    );
    const resumed = TurnResumed.fromJSON(events[0]?.data);
    assert.deepEqual(
      resumed.results.map((r) => [r.actionId, r.status]),
      [
        [a1, "applied"],
        [a2, "applied"],
      ],
    );
  });

  test("the outcomes of one run reach their turn in one signal, not one per action", async () => {
    const turnId = uniqueId("exec");
    const ws = uniqueId("w");
    await seedWorkspace(f.store, ws);
    const ids: number[] = [];
    for (let i = 0; i < 6; i++)
      ids.push(await submit(f.streams, ws, `a${i}`, { await: true, executionId: turnId }));
    const turn = await awaitTurn(f.env.client, ws, turnId, ids);
    await approve(e(), ws, ids);
    const ended = await turn.result();
    assert.equal(ended.state, "resumed");
    assert.deepEqual(
      ended.results.map((r) => r.actionId),
      ids,
    );
    const signals = ((await turn.fetchHistory()).events ?? []).flatMap((ev) => {
      const name = ev.workflowExecutionSignaledEventAttributes?.signalName;
      return name && name !== "awaiting" ? [name] : [];
    });
    assert.deepEqual(signals, ["actionsDecided"], "one signal for the six outcomes of the run");
  });

  test("one rejected awaited action completes the turn with the rejection, without waiting for the other", async () => {
    const turnId = uniqueId("exec");
    const { ws, a1, a2 } = await twoAwaited(turnId);
    const turn = await awaitTurn(f.env.client, ws, turnId, [a1, a2]);
    await reject(e(), ws, a2, "no drafts");
    const ended = await turn.result();
    assert.equal(ended.state, "completed");
    assert.equal(ended.reason, `action ${a2} was rejected: no drafts`);
    const events = await turnEvents(ws, turnId);
    assert.deepEqual(
      events.map((e) => e.type),
      ["TurnCompleted"],
    );
    assert.equal(TurnCompleted.fromJSON(events[0]?.data).reason, `action ${a2} was rejected: no drafts`);
  });

  test("a turn completed by a rejection records every awaited action: the cascaded dependent as rejected, the undecided one as pending", async () => {
    const turnId = uniqueId("exec");
    const ws = uniqueId("w");
    await seedWorkspace(f.store, ws);
    const root = await submit(f.streams, ws, "root", { await: true, executionId: turnId });
    const dependent = await submit(f.streams, ws, "dep", {
      await: true,
      executionId: turnId,
      dependsOn: ["root"],
    });
    const other = await submit(f.streams, ws, "other", { await: true, executionId: turnId });
    // As the kernel does: TurnSuspended in the stream, then the awaited set to the turn workflow.
    const stream = `workspace-${ws}`;
    const head = (await f.store.readStream(stream)).at(-1)?.revision ?? -1;
    await f.store.append(
      stream,
      [
        {
          type: "TurnSuspended",
          data: TurnSuspended.toJSON({ turnId, actionIds: [root, dependent, other] }),
          metadata: { actor: "service:kernel" },
        },
      ],
      head,
    );
    const turn = await awaitTurn(f.env.client, ws, turnId, [root, dependent, other]);
    await reject(e(), ws, root, "no drafts");
    await turn.result();
    const [completed] = await turnEvents(ws, turnId);
    const results = TurnCompleted.fromJSON(completed?.data).results;
    assert.deepEqual(
      results.map((r) => [r.actionId, r.status]),
      [
        [root, "rejected"],
        [dependent, "rejected"],
        [other, "pending"],
      ],
    );
    assert.equal(results[0]?.reason, "no drafts");
    assert.match(results[1]?.reason ?? "", new RegExp(`\\b${root}\\b`), "the cascade names the root");
    assert.equal(results[2]?.reason, "not decided when the turn completed");
  });

  test("decisions taken before the turn workflow exists are not lost: the turn resumes when it learns the awaited set", async () => {
    const turnId = uniqueId("exec");
    const { ws, a1, a2 } = await twoAwaited(turnId);
    await approve(e(), ws, [a1, a2]);
    await outcome(e(), ws, a2);
    // The run told the turn of both outcomes (signal-with-start) before the kernel's awaited set.
    const turn = await awaitTurn(f.env.client, ws, turnId, [a1, a2]);
    const ended = await turn.result();
    assert.equal(ended.state, "resumed");
    assert.equal((await turnEvents(ws, turnId)).length, 1);
  });
});
