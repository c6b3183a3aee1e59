import assert from "node:assert/strict";
import { test } from "node:test";
import type { Action, ActionStatus, LogResponse, Observation } from "@gatehouse/gateway-contract";
import { HttpError } from "../src/backends.ts";
import { actionDetail, inboxWorkspace } from "../src/views.ts";

function action(id: number, status: ActionStatus, dependsOn: number[] = [], executionId = "e1"): Action {
  return {
    id,
    workspaceId: "w1",
    binding: "MEMORY",
    localId: `~${id}`,
    title: `a${id}`,
    description: "",
    descriptionIsComplete: true,
    delivery: "simulate",
    dependsOn,
    status,
    caller: { kind: "agent", id: "c" },
    executionId,
    submittedAt: "",
    decidedBy: "",
    decidedAt: "",
    reason: "",
    cascadedFrom: 0,
    resultJson: "",
    outcomeUnknown: false,
    actionKind: null,
    autoApprovable: false,
    egress: false,
    implementsRevert: 0,
    lastRevision: id,
    chatStartedBy: "",
  };
}

function observation(id: number, executionId: string): Observation {
  return {
    id,
    binding: "MEMORY",
    title: `o${id}`,
    description: "",
    kind: "read",
    page: 0,
    containsRestrictedData: false,
    caller: { kind: "agent", id: "c" },
    recordedAt: "",
    executionId,
    chatStartedBy: "",
  };
}

const log = (entries: Array<Action | Observation>): LogResponse => ({
  workspaceId: "w1",
  revision: 20,
  headRevision: 20,
  latched: false,
  rules: [],
  entries: entries.map((e) =>
    "status" in e
      ? { id: e.id, kind: "action", action: e }
      : { id: e.id, kind: "observation", observation: e },
  ),
});

test("undecided dependencies are the transitive pending ones, in submission order; decided ones stop the walk", () => {
  const view = log([
    action(1, "applied"),
    action(2, "pending", [1]),
    action(3, "pending", [2]),
    action(4, "pending", [3, 1]),
  ]);
  const d = actionDetail(view, 4);
  assert.deepEqual(d.undecidedDependencies, [2, 3]);
  assert.deepEqual(
    d.dependencies.map((a) => a.id),
    [3, 1],
  );
  assert.deepEqual(
    actionDetail(view, 2).dependents.map((a) => a.id),
    [3],
  );
});

test("what the agent read before: observations of the same turn with a lower log id only", () => {
  const view = log([observation(1, "e1"), observation(2, "e2"), action(3, "pending"), observation(4, "e1")]);
  assert.deepEqual(
    actionDetail(view, 3).readBefore.map((o) => o.id),
    [1],
  );
});

test("an unknown action id is a 404 naming the workspace and id", () => {
  assert.throws(
    () => actionDetail(log([]), 9),
    (err: Error) =>
      err instanceof HttpError && err.statusCode === 404 && /workspace w1 has no action 9/.test(err.message),
  );
});

test("the inbox lists pending in submission order and the most recently changed decided actions first", () => {
  const view = log([action(1, "applied"), action(2, "pending"), action(3, "rejected"), action(4, "pending")]);
  const inbox = inboxWorkspace({ id: "w1", name: "n" }, view);
  assert.deepEqual(
    inbox.pending.map((a) => a.id),
    [2, 4],
  );
  assert.deepEqual(
    inbox.recent.map((a) => a.id),
    [3, 1],
  );
});
