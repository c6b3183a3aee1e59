/**
 * The decisions of a `gatehouse review` walk without a terminal: risky actions first, holding an
 * action holds what depends on it (approved earlier or not), rejecting one rejects its dependents,
 * an action whose dependency is pending outside the review is held, stopping holds the rest and
 * takes back approvals that depended on it, and the plan carries the digest of each record shown.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { type ActionRecord, ActionStatus } from "@gatehouse/proto";
import { planSummary, ReviewSession, reviewOrder } from "../src/review-plan.ts";

function rec(
  id: number,
  dependsOn: number[] = [],
  o: { risky?: boolean; status?: ActionStatus; executionId?: string } = {},
): ActionRecord {
  return {
    id,
    workspaceId: "w1",
    binding: "MEMORY",
    localId: `~${id}`,
    description: {
      title: `Call tool ${id}`,
      description: "",
      descriptionIsComplete: true,
      delivery: 1,
      dependsOn: [],
      implementsRevert: 0,
      autoApprovable: false,
      actionKind: undefined,
      classifiedBy: "",
      egress: false,
      summary: `tool ${id}`,
      fields: [],
      risks: o.risky ? [{ kind: "destructive", reason: "deletes" }] : [],
      preflightWarnings: [],
      preview: "",
    },
    status: o.status ?? ActionStatus.ACTION_STATUS_PENDING,
    dependsOn,
    caller: { kind: "agent", id: "c" },
    submittedAt: "",
    decidedBy: "",
    decidedAt: "",
    reason: "",
    cascadedFrom: 0,
    resultJson: "",
    outcomeUnknown: false,
    executionId: o.executionId ?? "ex-1",
    lastRevision: id,
    chatStartedBy: "",
    descriptionDigest: `digest-${id}`,
    withdrawnBy: "",
  } as ActionRecord;
}

test("risky pending actions come first, each part in submission order; --turn keeps one execution or agent turn", () => {
  const all = [
    rec(1),
    rec(2, [], { risky: true }),
    rec(3, [], { status: ActionStatus.ACTION_STATUS_APPLIED }),
    rec(4),
    rec(5, [], { risky: true, executionId: "t9.1.1" }),
    rec(6, [], { executionId: "t9.2.1" }),
  ];
  assert.deepEqual(
    reviewOrder(all).map((a) => a.id),
    [2, 5, 1, 4, 6],
  );
  assert.deepEqual(
    reviewOrder(all, "t9").map((a) => a.id),
    [5, 6],
  );
  assert.deepEqual(
    reviewOrder(all, "ex-1").map((a) => a.id),
    [2, 1, 4],
  );
});

test("holding an action holds its dependents, even one approved earlier in the walk, and says so", () => {
  const all = [rec(1), rec(2, [1], { risky: true }), rec(3, [2]), rec(4)];
  const s = new ReviewSession(reviewOrder(all), all);
  assert.deepEqual(s.approve(2), []);
  const notes = s.hold(1);
  assert.match(notes.join("\n"), /#1 has dependents in this review: held with it: #2, #3/);
  assert.equal(s.undecided(3), false, "a held dependent is not asked about");
  s.approve(4);
  const plan = s.plan();
  assert.deepEqual(plan.approve, [4]);
  assert.deepEqual(plan.hold, [1, 2, 3]);
  assert.deepEqual(plan.descriptionDigests, { 4: "digest-4" });
  assert.equal(planSummary(plan), "1 approve, 3 hold, 0 reject");
});

test("rejecting an action rejects its dependents (the service cascades: only the person's rejection is sent)", () => {
  const all = [rec(1), rec(2, [1]), rec(3)];
  const s = new ReviewSession(reviewOrder(all), all);
  s.approve(2);
  assert.match(s.reject(1, "wrong entity").join(""), /rejects its dependents too: #2/);
  s.approve(3);
  const plan = s.plan();
  assert.deepEqual(plan.reject, [{ id: 1, reason: "wrong entity" }]);
  assert.deepEqual(plan.rejectedWith, [2]);
  assert.deepEqual(plan.approve, [3]);
  assert.match(
    planSummary(plan),
    /^1 approve, 0 hold, 1 reject \(\+1 rejected with a rejected dependency: #2\)$/,
  );
});

test("an action depending on a pending action outside the review is held, naming it and the command that approves both", () => {
  const all = [rec(1, [], { executionId: "other" }), rec(2, [1])];
  const s = new ReviewSession(reviewOrder(all, "ex-1"), all);
  const notes = s.approve(2);
  assert.match(notes.join(""), /#2 held: it depends on #1, pending and not in this review/);
  assert.match(notes.join(""), /gatehouse approve w1 2 --with-deps/);
  assert.deepEqual(s.plan().approve, []);
});

test("stopping holds the actions not reviewed and takes back approvals that depend on them", () => {
  const all = [rec(1, [], { risky: true }), rec(2), rec(3, [2])];
  // Shown order: 1 (risky), 2, 3; approve 1, then stop before 2 — but 3 was approved first in
  // this order: 3 depends on 2.
  const s = new ReviewSession([all[0]!, all[2]!, all[1]!], all);
  s.approve(1);
  s.approve(3);
  const notes = s.holdRest();
  assert.match(notes.join(""), /#2 was not reviewed and stays pending: held with it: #3/);
  const plan = s.plan();
  assert.deepEqual(plan.approve, [1]);
  assert.deepEqual(plan.hold, [2, 3]);
});
