import { describe } from "node:test";
import {
  ActionNotFound,
  ActionNotPending,
  ActionNotRevertible,
  ActionStateConflict,
  type Command,
  DependenciesUndecided,
  DuplicateLocalId,
  decide,
  InvalidField,
  ReasonRequired,
  UnknownBinding,
  UnknownDependency,
  WorkspaceLatched,
} from "../src/domain/index.ts";
import {
  applied,
  applying,
  approved,
  autoDesc,
  binding,
  created,
  type DeciderRow,
  desc,
  failed,
  given,
  latched,
  observed,
  refused,
  rejected,
  reverted,
  rule,
  runDeciderTable,
  submitted,
} from "./decider-helpers.ts";

type Ev = Parameters<typeof given>[0][number];
type Row = DeciderRow;

const base: Ev[] = [created, binding("MEM"), binding("GIT")]; // revisions 0..2
const cascade = (id: number, from: number): Ev =>
  rejected(id, "service:approval", `needed action ${from}, which did not complete`, from);
const approve = (ids: number[], includeDependencies = false): Command => ({
  type: "Approve",
  actionIds: ids,
  decidedBy: "user:alice",
  includeDependencies,
});
const submit = (b: string, localId: string, dependsOn: string[] = [], over = desc()): Command => ({
  type: "SubmitAction",
  binding: b,
  localId,
  description: { ...over, dependsOn },
  payloadJson: "{}",
  executionId: "x1",
});
const autoNext = (b: string): Command => ({ type: "AutoApproveNext", binding: b });
const latchedOnMem: Ev[] = [observed("MEM", true), latched(3, "MEM")]; // revisions 3..4 after base
const egress = desc({ egress: true, title: "git push main" });
const OTHER_BINDING =
  /binding "GIT": the workspace read restricted data through "MEM" and is latched; writes to other bindings are refused for good \(start a new workspace/;
const EGRESS =
  /the workspace read restricted data through "MEM" and is latched; writes that send data out of the workspace \(egress, e\.g\. git push\) are refused on every binding for good \(start a new workspace/;
/** The reason an ActionRefused records: the WorkspaceLatched message for that write. */
const reasonOf = (when: Command, state: Ev[]): string => {
  try {
    decide(when, given(state));
  } catch (err) {
    return (err as Error).message;
  }
  throw new Error("expected a refusal");
};
const revert = (actionId: number, localId = "r1", over = desc({ title: "revert" })): Command => ({
  type: "RequestRevert",
  actionId,
  requestedBy: "user:bob",
  localId,
  description: over,
  payloadJson: '{"revert":true}',
});
const revertSubmitted = (b: string, localId: string, of: number): Ev => ({
  type: "ActionSubmitted",
  data: {
    binding: b,
    localId,
    description: desc({ title: "revert", implementsRevert: of }),
    dependsOn: [],
    payloadJson: '{"revert":true}',
    executionId: "",
  },
});
const appliedMem: Ev[] = [submitted("MEM", "a"), approved(3), applying(3), applied(3)]; // action 3, revisions 3..6

const rows: Row[] = [
  // ---- cascade ----
  {
    name: "rejecting an action cascades to its dependents transitively, each naming the action it needed",
    given: [
      ...base,
      submitted("MEM", "a"),
      submitted("MEM", "b", [3]),
      submitted("MEM", "c", [4]),
      submitted("MEM", "d"),
    ],
    when: { type: "Reject", actionId: 3, decidedBy: "user:alice", reason: "wrong entity" },
    expect: [rejected(3, "user:alice", "wrong entity"), cascade(4, 3), cascade(5, 4)],
  },
  {
    name: "a failed apply cascades to pending dependents",
    given: [...base, submitted("MEM", "a"), submitted("MEM", "b", [3]), approved(3), applying(3)],
    when: { type: "RecordApplyFailed", actionId: 3, message: "boom", outcomeUnknown: false },
    expect: [failed(3), cascade(4, 3)],
  },
  {
    name: "a failed apply with unknown outcome records outcomeUnknown and cascades",
    given: [...base, submitted("MEM", "a"), submitted("MEM", "b", [3]), approved(3), applying(3)],
    when: { type: "RecordApplyFailed", actionId: 3, message: "boom", outcomeUnknown: true },
    expect: [failed(3, true), cascade(4, 3)],
  },
  {
    name: "a cascade leaves already-decided dependents alone",
    given: [
      ...base,
      submitted("MEM", "a"),
      submitted("MEM", "b", [3]),
      rejected(4),
      submitted("MEM", "c", [3]),
    ],
    when: { type: "Reject", actionId: 3, decidedBy: "user:alice", reason: "no" },
    expect: [rejected(3), cascade(6, 3)],
  },
  {
    name: "a submission depending on a rejected action is rejected at once by cascade",
    given: [...base, submitted("MEM", "a"), rejected(3)],
    when: submit("MEM", "b", ["a"]),
    expect: [submitted("MEM", "b", [3], desc({ dependsOn: ["a"] })), cascade(5, 3)],
  },
  {
    name: "a submission depending on a failed action is rejected at once by cascade",
    given: [...base, submitted("MEM", "a"), approved(3), applying(3), failed(3)],
    when: submit("MEM", "b", ["a"]),
    expect: [submitted("MEM", "b", [3], desc({ dependsOn: ["a"] })), cascade(7, 3)],
  },
  // ---- approve ----
  {
    name: "approving an action with undecided dependencies is refused and lists them",
    given: [...base, submitted("MEM", "a"), submitted("MEM", "b", [3]), submitted("MEM", "c", [4])],
    when: approve([5]),
    error: { type: DependenciesUndecided, message: /undecided action\(s\) 3, 4; .*include_dependencies/ },
  },
  {
    name: "approving with include_dependencies approves the dependencies too, in submission order",
    given: [...base, submitted("MEM", "a"), submitted("MEM", "b", [3]), submitted("MEM", "c", [4])],
    when: approve([5], true),
    expect: [approved(3), approved(4), approved(5)],
  },
  {
    name: "a batch approves in submission order, not request order, and counts batch members as decided",
    given: [...base, submitted("MEM", "a"), submitted("GIT", "b"), submitted("MEM", "c", [3])],
    when: approve([5, 4, 3]),
    expect: [approved(3), approved(4), approved(5)],
  },
  {
    name: "approving an action whose dependency was already approved is allowed",
    given: [...base, submitted("MEM", "a"), submitted("MEM", "b", [3]), approved(3), applying(3), applied(3)],
    when: approve([4]),
    expect: [approved(4)],
  },
  {
    name: "approving an approved action is refused and says who approved it",
    given: [...base, submitted("MEM", "a"), approved(3, "user:bob")],
    when: approve([3]),
    error: { type: ActionNotPending, message: /action 3 was already approved by user:bob/ },
  },
  {
    name: "approving a cascaded action says why it was rejected",
    given: [...base, submitted("MEM", "a"), submitted("MEM", "b", [3]), rejected(3), cascade(4, 3)],
    when: approve([4]),
    error: {
      type: ActionNotPending,
      message: /action 4 was already rejected by service:approval because it needed action 3/,
    },
  },
  {
    name: "approving an unknown action is refused with ActionNotFound",
    given: [...base],
    when: approve([42]),
    error: { type: ActionNotFound, message: /no action 42/ },
  },
  // ---- reject ----
  {
    name: "a reject after approve is refused and changes nothing",
    given: [...base, submitted("MEM", "a"), approved(3, "user:bob"), applying(3), applied(3)],
    when: { type: "Reject", actionId: 3, decidedBy: "user:alice", reason: "late" },
    error: { type: ActionNotPending, message: /already approved by user:bob and applied/ },
  },
  {
    name: "a reject without a reason is refused",
    given: [...base, submitted("MEM", "a")],
    when: { type: "Reject", actionId: 3, decidedBy: "user:alice", reason: "  " },
    error: { type: ReasonRequired, message: /^reason:/ },
  },
  // ---- submit ----
  {
    name: "dependsOn local ids resolve to the action ids of the same binding",
    given: [...base, submitted("MEM", "a"), submitted("GIT", "a"), submitted("MEM", "b")],
    when: submit("MEM", "c", ["b", "a"]),
    expect: [submitted("MEM", "c", [5, 3], desc({ dependsOn: ["b", "a"] }))],
  },
  {
    name: "a dependsOn local id of another binding is refused as unknown",
    given: [...base, submitted("GIT", "g")],
    when: submit("MEM", "c", ["g"]),
    error: { type: UnknownDependency, message: /depends_on: "g"/ },
  },
  {
    name: "a different submission under a used local id of the same binding is refused",
    given: [...base, submitted("MEM", "a")],
    when: submit("MEM", "a", [], desc({ title: "something else" })),
    error: {
      type: DuplicateLocalId,
      message: /already submitted on binding "MEM" as action 3 with a different description/,
    },
  },
  {
    name: "a submission for a binding the workspace does not know is refused",
    given: [...base],
    when: submit("SLACK", "a"),
    error: { type: UnknownBinding },
  },
  {
    name: "CodeExecuted and other foreign events are ignored but advance the revision",
    given: [...base, { type: "CodeExecuted", data: { executionId: "x1", codeSha256: "ab", ok: true } }],
    when: submit("MEM", "a"),
    expect: [submitted("MEM", "a")],
  },
  // ---- auto-approval ----
  {
    name: "auto-approval approves an auto-approvable action with a kind and an enabled rule",
    given: [...base, rule("MEM", "k"), submitted("MEM", "a", [], autoDesc("k"))],
    when: autoNext("MEM"),
    expect: [approved(4, "rule:MEM/k")],
  },
  {
    name: "auto-approval needs the gatekeeper's autoApprovable mark",
    given: [...base, rule("MEM", "k"), submitted("MEM", "a", [], autoDesc("k", { autoApprovable: false }))],
    when: autoNext("MEM"),
    expect: [],
  },
  {
    name: "auto-approval needs an action kind",
    given: [...base, rule("MEM", "k"), submitted("MEM", "a", [], desc({ autoApprovable: true }))],
    when: autoNext("MEM"),
    expect: [],
  },
  {
    name: "auto-approval needs a rule for this binding and tag (a disabled rule does not count)",
    given: [
      ...base,
      rule("GIT", "k"),
      rule("MEM", "k"),
      rule("MEM", "k", false),
      submitted("MEM", "a", [], autoDesc("k")),
    ],
    when: autoNext("MEM"),
    expect: [],
  },
  {
    name: "auto-approval stops at the first pending action that needs a person and never skips ahead",
    given: [...base, rule("MEM", "k"), submitted("MEM", "a"), submitted("MEM", "b", [], autoDesc("k"))],
    when: autoNext("MEM"),
    expect: [],
  },
  {
    name: "auto-approval resumes once the blocking action is decided",
    given: [
      ...base,
      rule("MEM", "k"),
      submitted("MEM", "a"),
      submitted("MEM", "b", [], autoDesc("k")),
      rejected(4),
    ],
    when: autoNext("MEM"),
    expect: [approved(5, "rule:MEM/k")],
  },
  {
    name: "auto-approval drains per binding: a blocked binding does not block another",
    given: [...base, rule("GIT", "k"), submitted("MEM", "a"), submitted("GIT", "b", [], autoDesc("k"))],
    when: autoNext("GIT"),
    expect: [approved(5, "rule:GIT/k")],
  },
  {
    name: "no auto-approval once the workspace is latched",
    given: [
      ...base,
      rule("MEM", "k"),
      observed("MEM", true),
      latched(4, "MEM"),
      submitted("MEM", "a", [], autoDesc("k")),
    ],
    when: autoNext("MEM"),
    expect: [],
  },
  // ---- latch ----
  {
    name: "an observation with restricted data appends RestrictedDataLatched naming that observation",
    given: [...base],
    when: {
      type: "RecordObservation",
      binding: "MEM",
      description: {
        title: "read",
        description: "",
        containsRestrictedData: true,
        kind: "mcp.tool.read",
        page: 0,
      },
      executionId: "x1",
      requestId: "",
    },
    expect: [observed("MEM", true), latched(3, "MEM")],
  },
  {
    name: "after the latch a submission to another binding is refused and recorded as ActionRefused",
    given: [...base, ...latchedOnMem],
    when: submit("GIT", "a"),
    error: { type: WorkspaceLatched, message: OTHER_BINDING },
    recorded: [refused("GIT", "a", reasonOf(submit("GIT", "a"), [...base, ...latchedOnMem]))],
  },
  {
    name: "after the latch the binding that read the restricted data may still submit",
    given: [...base, ...latchedOnMem],
    when: submit("MEM", "a"),
    expect: [submitted("MEM", "a")],
  },
  {
    name: "after the latch an egress write is refused even on the latched binding, and recorded with the reason",
    given: [...base, ...latchedOnMem],
    when: submit("MEM", "push", [], egress),
    error: { type: WorkspaceLatched, message: new RegExp(`^binding "MEM": ${EGRESS.source}`) },
    recorded: [
      refused("MEM", "push", reasonOf(submit("MEM", "push", [], egress), [...base, ...latchedOnMem]), egress),
    ],
  },
  {
    name: "after the latch an egress write to another binding is refused as egress and recorded",
    given: [...base, ...latchedOnMem],
    when: submit("GIT", "push", [], egress),
    error: { type: WorkspaceLatched, message: new RegExp(`^binding "GIT": ${EGRESS.source}`) },
    recorded: [
      refused("GIT", "push", reasonOf(submit("GIT", "push", [], egress), [...base, ...latchedOnMem]), egress),
    ],
  },
  {
    name: "an egress write before any latch is submitted like any other",
    given: [...base, observed("MEM")],
    when: submit("GIT", "push", [], egress),
    expect: [submitted("GIT", "push", [], egress)],
  },
  {
    name: "a refused write is not an action: its local id is free and it cannot be depended on",
    given: [...base, ...latchedOnMem, refused("MEM", "push", "latched", egress)],
    when: submit("MEM", "next", ["push"]),
    error: { type: UnknownDependency, message: /depends_on: "push"/ },
  },
  {
    name: "after the latch approving a pending action of another binding is refused",
    given: [...base, submitted("GIT", "a"), observed("MEM", true), latched(4, "MEM")],
    when: approve([3]),
    error: { type: WorkspaceLatched, message: /^action 3 \(binding "GIT"\): .*writes to other bindings/ },
  },
  {
    name: "after the latch approving a pending egress action is refused even on the latched binding (nothing recorded)",
    given: [...base, submitted("MEM", "push", [], egress), observed("MEM", true), latched(4, "MEM")],
    when: approve([3]),
    error: { type: WorkspaceLatched, message: new RegExp(`^action 3 \\(binding "MEM"\\): ${EGRESS.source}`) },
  },
  {
    name: "after the latch a batch with an egress action is refused as a whole",
    given: [
      ...base,
      submitted("MEM", "a"),
      submitted("MEM", "push", [], egress),
      observed("MEM", true),
      latched(5, "MEM"),
    ],
    when: approve([3, 4]),
    error: { type: WorkspaceLatched, message: /^action 4 / },
  },
  {
    name: "after the latch a non-egress action of the latched binding may still be approved",
    given: [...base, submitted("MEM", "a"), observed("MEM", true), latched(4, "MEM")],
    when: approve([3]),
    expect: [approved(3)],
  },
  // ---- revert ----
  {
    name: "a revert of an applied action is submitted on its binding with implementsRevert, plus ActionReverted",
    given: [...base, ...appliedMem],
    when: revert(3),
    expect: [revertSubmitted("MEM", "r1", 3), reverted(3, 7, "user:bob")],
  },
  {
    name: "a revert of a pending action is refused: reject it instead",
    given: [...base, submitted("MEM", "a")],
    when: revert(3),
    error: {
      type: ActionNotRevertible,
      message: /^action 3 cannot be reverted: it is still pending.*reject it instead/,
    },
  },
  {
    name: "a revert of a rejected action is refused",
    given: [...base, submitted("MEM", "a"), rejected(3)],
    when: revert(3),
    error: { type: ActionNotRevertible, message: /it was rejected/ },
  },
  {
    name: "a revert of an apply with unknown outcome is refused and says to check the external system",
    given: [...base, submitted("MEM", "a"), approved(3), applying(3), failed(3, true)],
    when: revert(3),
    error: { type: ActionNotRevertible, message: /unknown outcome \(check the external system/ },
  },
  {
    name: "a second revert while the first is pending is refused, naming the revert action",
    given: [...base, ...appliedMem, revertSubmitted("MEM", "r1", 3), reverted(3, 7)],
    when: revert(3, "r2"),
    error: { type: ActionNotRevertible, message: /already reverted by action 7, which is pending/ },
  },
  {
    name: "a second revert after the first was applied is refused",
    given: [
      ...base,
      ...appliedMem,
      revertSubmitted("MEM", "r1", 3),
      reverted(3, 7),
      approved(7),
      applying(7),
      applied(7),
    ],
    when: revert(3, "r2"),
    error: { type: ActionNotRevertible, message: /already reverted by action 7, which is applied/ },
  },
  {
    name: "a revert may be asked for again once the previous revert was rejected",
    given: [...base, ...appliedMem, revertSubmitted("MEM", "r1", 3), reverted(3, 7), rejected(7)],
    when: revert(3, "r2"),
    expect: [revertSubmitted("MEM", "r2", 3), reverted(3, 10, "user:bob")],
  },
  {
    name: "a revert the gatekeeper says implements another action is refused",
    given: [...base, ...appliedMem],
    when: revert(3, "r1", desc({ title: "revert", implementsRevert: 99 })),
    error: { type: InvalidField, message: /^description\.implements_revert: .*action 99, not action 3/ },
  },
  {
    name: "an egress revert after the latch is refused and recorded like any egress write",
    given: [...base, ...appliedMem, observed("MEM", true), latched(7, "MEM")],
    when: revert(3, "r1", desc({ title: "revert", egress: true })),
    error: { type: WorkspaceLatched, message: EGRESS },
    recorded: [
      refused(
        "MEM",
        "r1",
        reasonOf(revert(3, "r1", desc({ title: "revert", egress: true })), [
          ...base,
          ...appliedMem,
          observed("MEM", true),
          latched(7, "MEM"),
        ]),
        desc({ title: "revert", egress: true, implementsRevert: 3 }),
        "",
      ),
    ],
  },
  // ---- apply claim ----
  {
    name: "the apply claim needs an approved action",
    given: [...base, submitted("MEM", "a")],
    when: { type: "ClaimApply", actionId: 3, claimedBy: "i1" },
    error: { type: ActionStateConflict, message: /cannot be claimed/ },
  },
  {
    name: "the apply claim of an approved action appends ActionApplying with the instance id",
    given: [...base, submitted("MEM", "a"), approved(3)],
    when: { type: "ClaimApply", actionId: 3, claimedBy: "i9" },
    expect: [applying(3, "i9")],
  },
];

describe("approval decider", () => {
  runDeciderTable(rows);
});
