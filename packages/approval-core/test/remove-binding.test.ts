/**
 * Revocation as tables: given events / when RemoveBinding (or a later command) / then events or a
 * typed error. Pure: no store, no server.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  ActionNotRevertible,
  ActionStateConflict,
  type Command,
  decide,
  InvalidField,
  REMOVAL_REASON,
  UnknownBinding,
  UnknownDependency,
} from "../src/domain/index.ts";
import {
  applied,
  applying,
  approved,
  binding,
  created,
  type DeciderRow,
  desc,
  given,
  observed,
  rejected,
  removed,
  rule,
  runDeciderTable,
  submitted,
} from "./decider-helpers.ts";

type Ev = Parameters<typeof given>[0][number];
type Row = DeciderRow;

const base: Ev[] = [created, binding("MEM"), binding("GIT")]; // revisions 0..2; MEM's grant is 1
const remove = (b = "MEM", reason = "contractor left"): Command => ({
  type: "RemoveBinding",
  binding: b,
  removedBy: "user:owner",
  reason,
});
const byRemoval = (id: number): Ev => rejected(id, "user:owner", REMOVAL_REASON);
const cascade = (id: number, from: number): Ev =>
  rejected(id, "service:approval", `needed action ${from}, which did not complete`, from);

const rows: Row[] = [
  {
    name: "removing a binding records who removed it, why, and which grant",
    given: base,
    when: remove(),
    expect: [removed("MEM", 1, "user:owner", "contractor left")],
  },
  {
    name: "removing a binding rejects its pending actions with reason 'binding removed'; other bindings keep theirs",
    given: [...base, submitted("MEM", "a"), submitted("GIT", "g"), submitted("MEM", "b")], // 3, 4, 5
    when: remove(),
    expect: [removed("MEM", 1, "user:owner", "contractor left"), byRemoval(3), byRemoval(5)],
  },
  {
    name: "a pending dependent of a rejected action is rejected by the cascade, naming what it needed",
    given: [...base, submitted("MEM", "a"), submitted("MEM", "b", [3]), submitted("MEM", "c", [4])], // 3..5
    when: remove(),
    expect: [removed("MEM", 1, "user:owner", "contractor left"), byRemoval(3), cascade(4, 3), cascade(5, 4)],
  },
  {
    name: "an approved action not yet claimed is rejected too (nothing was sent); applying, applied and decided ones keep their state",
    given: [
      ...base,
      submitted("MEM", "a"), // 3: approved
      submitted("MEM", "b"), // 4: applying
      submitted("MEM", "c"), // 5: applied
      submitted("MEM", "d"), // 6: rejected
      approved(3),
      approved(4),
      applying(4),
      approved(5),
      applying(5),
      applied(5),
      rejected(6),
    ],
    when: remove(),
    expect: [removed("MEM", 1, "user:owner", "contractor left"), byRemoval(3)],
  },
  {
    name: "removing a binding the workspace does not have is refused",
    given: base,
    when: remove("NOPE"),
    error: { type: UnknownBinding, message: /binding: "NOPE" is not a binding of this workspace/ },
  },
  {
    name: "removing a binding twice is refused the second time",
    given: [...base, removed("MEM", 1)],
    when: remove(),
    error: { type: UnknownBinding, message: /"MEM" is not a binding/ },
  },
  {
    name: "a removal says who removes it",
    given: base,
    when: { type: "RemoveBinding", binding: "MEM", removedBy: "", reason: "" },
    error: { type: InvalidField, message: /^removed_by: say who removes the binding/ },
  },
  {
    name: "a removal's reason is bounded",
    given: base,
    when: remove("MEM", "x".repeat(501)),
    error: { type: InvalidField, message: /^reason: at most 500 characters/ },
  },
  {
    name: "after a removal the binding's writes are refused",
    given: [...base, removed("MEM", 1)],
    when: {
      type: "SubmitAction",
      binding: "MEM",
      localId: "z",
      description: { ...desc(), dependsOn: [] },
      payloadJson: "{}",
      executionId: "x2",
    },
    error: { type: UnknownBinding, message: /"MEM" is not a binding/ },
  },
  {
    name: "a binding introduced again under the same name is a new grant: removing it names the new grant and leaves the old grant's records alone",
    given: [
      ...base,
      submitted("MEM", "a"),
      removed("MEM", 1),
      byRemoval(3),
      binding("MEM"),
      submitted("MEM", "a"),
    ], // 3, 4, 5, 6 (grant), 7
    when: remove(),
    expect: [removed("MEM", 6, "user:owner", "contractor left"), byRemoval(7)],
  },
  {
    name: "the grant is re-checked at apply: an approved action of a removed grant is never claimed through a new grant of the same name",
    // Built by hand (the removal alone would have rejected action 3): approved under grant 1, binding
    // removed and introduced again (grant 6).
    given: [...base, submitted("MEM", "a"), approved(3), removed("MEM", 1), binding("MEM")],
    when: { type: "ClaimApply", actionId: 3, claimedBy: "i1" },
    error: {
      type: ActionStateConflict,
      message:
        /^action 3 cannot be applied: binding MEM was removed and introduced again as a new grant after it was submitted; the request was not sent$/,
    },
  },
  {
    name: "the grant is re-checked at apply: an approved action of a removed binding is never claimed",
    given: [...base, submitted("MEM", "a"), approved(3), removed("MEM", 1)],
    when: { type: "ClaimApply", actionId: 3, claimedBy: "i1" },
    error: {
      type: ActionStateConflict,
      message: /^action 3 cannot be applied: binding MEM was removed after/,
    },
  },
  {
    name: "an applied action of a removed grant cannot be reverted through a new grant of the same name",
    given: [
      ...base,
      submitted("MEM", "a"),
      approved(3),
      applying(3),
      applied(3),
      removed("MEM", 1),
      binding("MEM"),
    ],
    when: {
      type: "RequestRevert",
      actionId: 3,
      requestedBy: "user:bob",
      localId: "r1",
      description: desc(),
      payloadJson: "{}",
    },
    error: { type: ActionNotRevertible, message: /its binding MEM was removed/ },
  },
];

describe("removing a binding", () => {
  runDeciderTable(rows);

  test("past observations and actions of a removed binding stay in the projection, with the grant they were made under", () => {
    const state = given([
      ...base,
      observed("MEM"),
      submitted("MEM", "a"),
      removed("MEM", 1),
      byRemoval(4),
      binding("MEM"),
      observed("MEM"),
    ]);
    assert.equal(state.bindings.get("MEM")?.grant, 7);
    assert.deepEqual(
      [...state.observations.values()].map((o) => [o.id, o.binding, o.grant]),
      [
        [3, "MEM", 1],
        [8, "MEM", 7],
      ],
    );
    const a = state.actions.get(4);
    assert.deepEqual(
      [a?.binding, a?.grant, a?.reason, a?.decidedBy],
      ["MEM", 1, REMOVAL_REASON, "user:owner"],
    );
  });
});

describe("a binding introduced again is a new grant", () => {
  const again: Ev[] = [...base, submitted("MEM", "a"), removed("MEM", 1), byRemoval(3), binding("MEM")]; // 3..6
  test("its gatekeeper may reuse a local id of the removed grant, and a dependency on it does not reach the old action", () => {
    const state = given(again);
    const submit = (localId: string, dependsOn: string[]): Command => ({
      type: "SubmitAction",
      binding: "MEM",
      localId,
      description: desc({ dependsOn }),
      payloadJson: "{}",
      executionId: "x2",
    });
    assert.deepEqual(
      decide(submit("a", []), state).map((e) => e.type),
      ["ActionSubmitted"],
    );
    assert.throws(() => decide(submit("b", ["a"]), state), UnknownDependency);
  });
  test("a caller whose token names the removed grant records nothing through the new grant of the same name", () => {
    const state = given(again); // MEM's current grant is 6; the removed one was 1
    const read = (grant: number): Command => ({
      type: "RecordObservation",
      binding: "MEM",
      grant,
      description: { title: "read", description: "", containsRestrictedData: false, kind: "k", page: 0 },
      executionId: "x1",
      requestId: "",
    });
    const write = (grant: number): Command => ({
      type: "SubmitAction",
      binding: "MEM",
      grant,
      localId: "z",
      description: desc(),
      payloadJson: "{}",
      executionId: "x1",
    });
    const removedGrant =
      /^binding: "MEM" was removed from this workspace after this execution started \(grant 1 ended\); nothing was recorded$/;
    assert.throws(
      () => decide(read(1), state),
      (e: Error) => e instanceof UnknownBinding && removedGrant.test(e.message),
    );
    assert.throws(
      () => decide(write(1), state),
      (e: Error) => e instanceof UnknownBinding && removedGrant.test(e.message),
    );
    assert.deepEqual(
      decide(read(6), state).map((e) => e.type),
      ["ObservationRecorded"],
    );
    assert.deepEqual(
      decide(write(6), state).map((e) => e.type),
      ["ActionSubmitted"],
    );
  });
  test("auto-approval rules of the removed grant do not carry over", () => {
    const state = given([...base, rule("MEM", "mcp.tool.x"), removed("MEM", 1), binding("MEM")]);
    assert.equal(state.rules.size, 0);
  });
});
