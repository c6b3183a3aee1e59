/**
 * The decision races, defined once and run on every backend (decisions.test.ts: SQLite;
 * decisions-postgres.test.ts: PostgreSQL): two approvals of one action, in one approval process and in two
 * processes on one store — one wins and applies once, the other gets ABORTED naming the winner.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ActionStatus, type DecisionResponse } from "@gatehouse/proto";
import { type ServiceError, status } from "@grpc/grpc-js";
import { call, type Stack, startHarness } from "./harness.ts";
import { submit } from "./suite-helpers.ts";

/** Registers the race tests on the stack `stack()` returns (started by the caller's `before`). */
export function defineDecisionRaceTests(stack: () => Stack): void {
  test("two concurrent approvals of one action apply it exactly once and the loser gets a clear ABORTED", async () => {
    const h = await startHarness(stack());
    try {
      const id = await submit(h, "MEM", "a");
      h.gatekeeper.delayMs = 50;
      const results = await Promise.allSettled([
        call<unknown, DecisionResponse>(h.decisions, "approve", {
          workspaceId: h.ws,
          actionId: id,
          decidedBy: "user:alice",
        }),
        call<unknown, DecisionResponse>(h.decisions, "approve", {
          workspaceId: h.ws,
          actionId: id,
          decidedBy: "user:bob",
        }),
      ]);
      assert.equal(h.gatekeeper.appliedIn(h.ws).length, 1);
      const ok = results.filter((r) => r.status === "fulfilled");
      const lost = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
      assert.equal(ok.length, 1);
      assert.equal(lost.length, 1);
      const err = lost[0]!.reason as ServiceError;
      assert.equal(err.code, status.ABORTED);
      assert.match(err.details, new RegExp(`action ${id} was already approved by user:(alice|bob)`));
      const rec = (ok[0] as PromiseFulfilledResult<DecisionResponse>).value.actions.find((a) => a.id === id);
      assert.equal(rec?.status, ActionStatus.ACTION_STATUS_APPLIED);
      assert.equal(h.gatekeeper.appliedIn(h.ws)[0]?.payloadJson, JSON.stringify({ tool: "create_entities" }));
      assert.equal(h.gatekeeper.appliedIn(h.ws)[0]?.localId, "a");
      assert.equal(h.gatekeeper.appliedIn(h.ws)[0]?.url, "mcp+stdio://mem");
    } finally {
      await h.close();
    }
  });

  test("two approval processes racing on one action apply it exactly once: the workflow takes one decision", async () => {
    const h1 = await startHarness(stack());
    const h2 = await startHarness(stack(), { ws: h1.ws });
    try {
      const id = await submit(h1, "MEM", "a");
      h1.gatekeeper.delayMs = 30;
      const results = await Promise.allSettled([
        call(h1.decisions, "approve", { workspaceId: h1.ws, actionId: id, decidedBy: "user:alice" }),
        call(h2.decisions, "approve", { workspaceId: h1.ws, actionId: id, decidedBy: "user:bob" }),
      ]);
      assert.equal(h1.gatekeeper.appliedIn(h1.ws).length, 1);
      assert.equal(results.filter((r) => r.status === "fulfilled").length, 1);
      const lost = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
      assert.ok(lost, "one approval must lose");
      assert.equal((lost.reason as ServiceError).code, status.ABORTED);
      assert.match((lost.reason as ServiceError).details, /already approved by user:/);
    } finally {
      await h2.close();
      await h1.close();
    }
  });
}
