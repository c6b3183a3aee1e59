/**
 * Decisions bound to what the person was shown (description digests) and approvals withdrawn
 * before apply, as given/when/then tables over the pure decider.
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  ApprovalNotWithdrawable,
  type Command,
  DescriptionDigestMismatch,
  DescriptionNotShown,
  descriptionDigest,
  foldEvents,
  InvalidField,
  toActionRecord,
} from "../src/domain/index.ts";
import {
  applying,
  approved,
  binding,
  created,
  type DeciderRow,
  desc,
  given,
  runDeciderTable,
  stored,
  submitted,
} from "./decider-helpers.ts";

type Ev = Parameters<typeof given>[0][number];

const base: Ev[] = [created, binding("MEM")]; // revisions 0..1
// Actions 2, 3 (needs 2) and 4 (needs 3), and 5 on its own.
const chain: Ev[] = [
  ...base,
  submitted("MEM", "a", [], desc({ title: "create Alice" })),
  submitted("MEM", "b", [2], desc({ title: "relate Alice" })),
  submitted("MEM", "c", [3], desc({ title: "relate again" })),
  submitted("MEM", "d", [], desc({ title: "unrelated" })),
];
/** The digest a client shows for action `id` of `events`. */
const digestOf = (events: Ev[], id: number): string => {
  const state = given(events);
  const a = state.actions.get(id);
  assert.ok(a, `no action ${id}`);
  return toActionRecord(state, a).descriptionDigest;
};
const approveBound = (
  ids: number[],
  digests: Array<[number, string]>,
  includeDependencies = false,
): Command => ({
  type: "Approve",
  actionIds: ids,
  decidedBy: "user:alice",
  includeDependencies,
  descriptionDigests: new Map(digests),
});
const withdraw = (ids: number[], reason = ""): Command => ({
  type: "WithdrawApproval",
  actionIds: ids,
  withdrawnBy: "user:alice",
  reason,
});
const withdrawn = (actionId: number, withdrawnWith = 0, reason = ""): Ev => ({
  type: "ActionApprovalWithdrawn",
  data: { actionId, withdrawnBy: "user:alice", reason, withdrawnWith },
});

const rows: DeciderRow[] = [
  {
    name: "a bound approval records the digest each action was shown with",
    given: chain,
    when: approveBound(
      [2, 5],
      [
        [2, digestOf(chain, 2)],
        [5, digestOf(chain, 5)],
      ],
    ),
    expect: [approved(2, "user:alice", digestOf(chain, 2)), approved(5, "user:alice", digestOf(chain, 5))],
  },
  {
    name: "another action's digest is refused naming the action, and nothing is approved",
    given: chain,
    when: approveBound(
      [2, 5],
      [
        [2, digestOf(chain, 2)],
        [5, digestOf(chain, 2)],
      ],
    ),
    error: { type: DescriptionDigestMismatch, message: /action 5 .*nothing was approved/ },
  },
  {
    name: "a digest of an edited description (same action id) is refused",
    given: chain,
    when: approveBound(
      [2],
      [
        [
          2,
          digestOf(
            [
              ...base,
              submitted("MEM", "a", [], desc({ title: "create Alice", description: "something else" })),
            ],
            2,
          ),
        ],
      ],
    ),
    error: { type: DescriptionDigestMismatch, message: /action 2/ },
  },
  {
    name: "a bound approval that pulls in a dependency it was not shown is refused naming the dependency",
    given: chain,
    when: approveBound([3], [[3, digestOf(chain, 3)]], true),
    error: { type: DescriptionNotShown, message: /would approve action 2 but carries no digest/ },
  },
  {
    name: "withdrawing an approval takes its approved dependents back too, in submission order",
    given: [...chain, approved(2), approved(3), approved(4), approved(5)],
    when: withdraw([2], "not this one"),
    expect: [
      withdrawn(2, 0, "not this one"),
      withdrawn(3, 2, "not this one"),
      withdrawn(4, 2, "not this one"),
    ],
  },
  {
    name: "an action already claimed for apply cannot be withdrawn, and nothing is",
    given: [...chain, approved(2), approved(5), applying(2)],
    when: withdraw([5, 2]),
    error: {
      type: ApprovalNotWithdrawable,
      message: /action 2 is already claimed for apply .*nothing was withdrawn/,
    },
  },
  {
    name: "a pending action has no approval to withdraw",
    given: chain,
    when: withdraw([5]),
    error: { type: ApprovalNotWithdrawable, message: /action 5 is pending/ },
  },
  {
    name: "a withdrawal must name who withdraws",
    given: [...chain, approved(5)],
    when: { type: "WithdrawApproval", actionIds: [5], withdrawnBy: "", reason: "" },
    error: { type: InvalidField, message: /withdrawn_by/ },
  },
];

describe("review decisions: approvals bound to descriptions, withdrawals before apply", () => {
  runDeciderTable(rows);

  test("a withdrawn action is pending again, names who withdrew it, and can be approved again", () => {
    const events = [...chain, approved(5), withdrawn(5)];
    const state = foldEvents(events.map((e, i) => stored(e, i)));
    const record = toActionRecord(
      state,
      state.actions.get(5) as NonNullable<ReturnType<typeof state.actions.get>>,
    );
    assert.equal(record.status, 1 /* PENDING */);
    assert.equal(record.withdrawnBy, "user:alice");
    assert.equal(record.decidedBy, "");
  });

  test("the digest covers the workspace, the action id and the whole description", () => {
    const d = desc({ title: "t" });
    const a = descriptionDigest("w1", 2, d);
    assert.match(a, /^[0-9a-f]{64}$/);
    assert.notEqual(a, descriptionDigest("w2", 2, d));
    assert.notEqual(a, descriptionDigest("w1", 3, d));
    assert.notEqual(a, descriptionDigest("w1", 2, { ...d, summary: "x" }));
    assert.equal(a, descriptionDigest("w1", 2, { ...d }));
  });
});
