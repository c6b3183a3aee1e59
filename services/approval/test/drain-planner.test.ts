/** The pure planning behind the decision service: given events / when planning / then the plan. */
import assert from "node:assert/strict";
import { test } from "node:test";
import {
  ActionNotFound,
  ActionNotPending,
  DependenciesUndecided,
  ReasonRequired,
  WorkspaceLatched,
} from "@gatehouse/approval-core";
import {
  approvalPlan,
  bindingsOf,
  nextAutoApproval,
  validateReject,
} from "../src/lifecycle/drain-planner.ts";
import { approved, binding, created, given, latched, rejected, rule, submitted } from "./domain-events.ts";

// Revisions: 0 created, 1 MEM, 2 GIT; actions get the revision of their ActionSubmitted.
const base = [created, binding("MEM"), binding("GIT")];
const ADD = "mcp.tool.add";

test("the drain approves the binding's first pending action when a rule covers it, with the rule as decider", () => {
  const s = given([...base, submitted("MEM", "a", { auto: ADD }), rule("MEM", ADD)]);
  assert.deepEqual(nextAutoApproval(s, "MEM"), { actionId: 3, decidedBy: `rule:MEM/${ADD}` });
});

test("the drain stops at the first pending action that needs a person and never skips ahead", () => {
  const s = given([
    ...base,
    submitted("MEM", "a", { auto: ADD }), // 3
    submitted("MEM", "b"), // 4: needs a person
    submitted("MEM", "c", { auto: ADD }), // 5
    rule("MEM", ADD),
    approved(3),
  ]);
  assert.equal(nextAutoApproval(s, "MEM"), undefined);
});

test("once the blocking action is decided the drain moves on to the next one", () => {
  const s = given([
    ...base,
    submitted("MEM", "a", { auto: ADD }), // 3
    submitted("MEM", "b"), // 4
    submitted("MEM", "c", { auto: ADD }), // 5
    rule("MEM", ADD),
    approved(3),
    rejected(4),
  ]);
  assert.equal(nextAutoApproval(s, "MEM")?.actionId, 5);
});

test("the drain is per binding: another binding's pending action does not block it", () => {
  const s = given([...base, submitted("GIT", "g"), submitted("MEM", "a", { auto: ADD }), rule("MEM", ADD)]);
  assert.equal(nextAutoApproval(s, "MEM")?.actionId, 4);
  assert.equal(nextAutoApproval(s, "GIT"), undefined);
});

test("the drain approves nothing without a rule for the action kind or once the workspace is latched", () => {
  const noRule = given([...base, submitted("MEM", "a", { auto: ADD }), rule("MEM", "other.tag")]);
  assert.equal(nextAutoApproval(noRule, "MEM"), undefined);
  const disabled = given([
    ...base,
    submitted("MEM", "a", { auto: ADD }),
    rule("MEM", ADD),
    rule("MEM", ADD, false),
  ]);
  assert.equal(nextAutoApproval(disabled, "MEM"), undefined);
  const isLatched = given([
    ...base,
    submitted("MEM", "a", { auto: ADD }),
    rule("MEM", ADD),
    latched(5, "MEM"),
  ]);
  assert.equal(nextAutoApproval(isLatched, "MEM"), undefined);
});

test("the drain waits while the action depends on an undecided action", () => {
  const s = given([
    ...base,
    submitted("GIT", "g"), // 3
    submitted("MEM", "a", { auto: ADD, dependsOn: [3] }), // 4
    rule("MEM", ADD),
  ]);
  assert.equal(nextAutoApproval(s, "MEM"), undefined);
});

test("the approval plan adds undecided dependencies in submission order when asked, and refuses otherwise", () => {
  const s = given([
    ...base,
    submitted("MEM", "a"), // 3
    submitted("MEM", "b", { dependsOn: [3] }), // 4
    submitted("MEM", "c", { dependsOn: [4] }), // 5
  ]);
  assert.deepEqual(approvalPlan(s, [5], "user:alice", true), [3, 4, 5]);
  assert.deepEqual(approvalPlan(s, [5, 3, 4], "user:alice", false), [3, 4, 5]);
  assert.throws(() => approvalPlan(s, [5], "user:alice", false), DependenciesUndecided);
});

test("the approval plan refuses decided, unknown and latched actions with the domain's error", () => {
  const s = given([...base, submitted("MEM", "a"), approved(3, "user:bob"), submitted("GIT", "g")]);
  assert.throws(
    () => approvalPlan(s, [3], "user:alice", false),
    (e: unknown) =>
      e instanceof ActionNotPending && e.lostRace && /already approved by user:bob/.test(e.message),
  );
  assert.throws(() => approvalPlan(s, [99], "user:alice", false), ActionNotFound);
  const l = given([...base, submitted("GIT", "g"), latched(9, "MEM")]);
  assert.throws(() => approvalPlan(l, [3], "user:alice", false), WorkspaceLatched);
});

test("a rejection needs a reason and a pending action", () => {
  const s = given([...base, submitted("MEM", "a"), submitted("MEM", "b"), approved(4)]);
  assert.throws(() => validateReject(s, 3, "user:alice", "  "), ReasonRequired);
  assert.throws(
    () => validateReject(s, 4, "user:alice", "no"),
    (e: unknown) => e instanceof ActionNotPending && !e.lostRace,
  );
  assert.doesNotThrow(() => validateReject(s, 3, "user:alice", "no"));
});

test("bindingsOf lists each binding of the given actions once, ignoring unknown ids", () => {
  const s = given([...base, submitted("MEM", "a"), submitted("GIT", "g"), submitted("MEM", "b")]);
  assert.deepEqual(bindingsOf(s, [5, 3, 4, 42]), ["MEM", "GIT"]);
});
