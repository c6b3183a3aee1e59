/**
 * ClaimRun (the batch workflow's claim): an approved action whose dependency failed is cascaded,
 * and so is, in the same claim, an approved action that needs it — transitively — instead of
 * blocking the binding's later actions forever (found by the 1,000-action acceptance test).
 */
import { describe } from "node:test";
import {
  applying,
  approved,
  binding,
  created,
  type DeciderRow,
  failed,
  runDeciderTable,
  submitted,
} from "./decider-helpers.ts";

const reason = (id: number) => `needed action ${id}, which did not complete`;
const cascaded = (actionId: number, from: number) => ({
  type: "ActionRejected" as const,
  data: { actionId, decidedBy: "service:approval", reason: reason(from), cascadedFrom: from },
});

// Revisions = action ids: 2 fails at apply; 3 needs 2, 4 needs 3, 5 needs nothing.
const chain = [
  created,
  binding("MEM"),
  submitted("MEM", "a"),
  submitted("MEM", "b", [2]),
  submitted("MEM", "c", [3]),
  submitted("MEM", "d"),
  approved(2),
  approved(3),
  approved(4),
  approved(5),
  applying(2),
  failed(2),
];

const rows: DeciderRow[] = [
  {
    name: "ClaimRun cascades an approved action whose dependency failed and, in the same claim, the approved action that needs it; the independent one is claimed",
    given: chain,
    when: { type: "ClaimRun", binding: "MEM", max: 10, claimedBy: "run-1" },
    expect: [
      cascaded(3, 2),
      cascaded(4, 3),
      { type: "ActionApplying", data: { actionId: 5, claimedBy: "run-1" } },
    ],
  },
  {
    name: "ClaimRun with only dead approved actions left cascades them all and claims nothing",
    given: chain.filter(
      (e) => !(e.type === "ActionApproved" && (e.data as { actionId: number }).actionId === 5),
    ),
    when: { type: "ClaimRun", binding: "MEM", max: 10, claimedBy: "run-1" },
    expect: [cascaded(3, 2), cascaded(4, 3)],
  },
];

describe("ClaimRun cascades dead approved actions transitively", () => runDeciderTable(rows));
