/**
 * Rules that could never fire are refused; retried gatekeeper calls are recognized. Tables of
 * given events / when command / then events or a typed error, pure (no store, no server).
 */
import assert from "node:assert/strict";
import { describe, test } from "node:test";
import {
  ActionKindNotAutoApprovable,
  ActionKindsNotPublished,
  type Command,
  DuplicateLocalId,
  DuplicateObservationRequest,
  RuleNotFound,
  recordedObservationId,
  UnknownActionKind,
  UnknownBinding,
} from "../src/domain/index.ts";
import {
  approved,
  autoDesc,
  binding,
  created,
  type DeciderRow,
  desc,
  given,
  kind,
  latched,
  observed,
  rule,
  runDeciderTable,
  submitted,
} from "./decider-helpers.ts";

type Ev = Parameters<typeof given>[0][number];
type Row = DeciderRow;

const DESTRUCTIVE = "annotations.destructiveHint=true (must be false)";
// FILES publishes two kinds, one auto-approvable; OLD was introduced before kinds were published.
const base: Ev[] = [
  created,
  binding("FILES", [kind("mcp.tool.create_directory"), kind("mcp.tool.write_file", DESTRUCTIVE)]),
  binding("OLD"),
  binding("READS", []),
]; // revisions 0..3

const setRule = (b: string, tag: string, enabled = true): Command => ({
  type: "SetAutoApprovalRule",
  binding: b,
  actionKindTag: tag,
  enabled,
  setBy: "user:alice",
});
const submit = (localId: string, over = desc(), payloadJson = "{}", executionId = "x1"): Command => ({
  type: "SubmitAction",
  binding: "FILES",
  localId,
  description: over,
  payloadJson,
  executionId,
});
const read = (requestId: string, page = 0, executionId = "x1"): Command => ({
  type: "RecordObservation",
  binding: "FILES",
  description: { title: "read", description: "", containsRestrictedData: false, kind: "mcp.tool.read", page },
  executionId,
  requestId,
});

const rows: Row[] = [
  // ---- rules ----
  {
    name: "a rule for a published auto-approvable kind is stored",
    given: base,
    when: setRule("FILES", "mcp.tool.create_directory"),
    expect: [rule("FILES", "mcp.tool.create_directory")],
  },
  {
    name: "a rule for a tag no action of the binding can carry is refused, naming the valid tags",
    given: base,
    when: setRule("FILES", "mcp.tool.create_entities"),
    error: {
      type: UnknownActionKind,
      message:
        /no action of binding "FILES" can carry "mcp\.tool\.create_entities".*auto-approvable tags: "mcp\.tool\.create_directory"/,
    },
  },
  {
    name: "a rule for a kind that can never be auto-approved is refused with the gatekeeper's reason",
    given: base,
    when: setRule("FILES", "mcp.tool.write_file"),
    error: {
      type: ActionKindNotAutoApprovable,
      message:
        /"mcp\.tool\.write_file" on binding "FILES" can never be auto-approved \(annotations\.destructiveHint=true \(must be false\)\).*auto-approvable tags: "mcp\.tool\.create_directory"/,
    },
  },
  {
    name: "a binding that only reads offers no tag at all",
    given: base,
    when: setRule("READS", "mcp.tool.read_graph"),
    error: { type: UnknownActionKind, message: /auto-approvable tags: none/ },
  },
  {
    name: "a binding introduced before kinds were published refuses new rules, saying to introduce it again",
    given: base,
    when: setRule("OLD", "mcp.tool.create_directory"),
    error: {
      type: ActionKindsNotPublished,
      message:
        /introduced before .*introduce the resource again \(gatehouse disconnect <workspace> OLD, then gatehouse connect/,
    },
  },
  {
    name: "once removed and introduced again, the binding's published kinds take rules",
    given: [
      ...base,
      { type: "BindingRemoved", data: { binding: "OLD", removedBy: "user:alice", reason: "", grant: 2 } },
      binding("OLD", [kind("mcp.tool.create_directory")]),
    ],
    when: setRule("OLD", "mcp.tool.create_directory"),
    expect: [rule("OLD", "mcp.tool.create_directory")],
  },
  {
    name: "a rule on an unknown binding is refused",
    given: base,
    when: setRule("SLACK", "mcp.tool.post"),
    error: { type: UnknownBinding, message: /"SLACK" is not a binding/ },
  },
  {
    name: "turning off a rule that is on is allowed for any tag, published or not",
    given: [...base, rule("FILES", "mcp.tool.create_directory"), rule("FILES", "mcp.tool.gone")],
    when: setRule("FILES", "mcp.tool.gone", false),
    expect: [rule("FILES", "mcp.tool.gone", false)],
  },
  {
    name: "turning off a rule that never existed is refused, naming the binding's rules that are on, and records nothing",
    given: [...base, rule("FILES", "mcp.tool.create_directory")],
    when: setRule("FILES", "mcp.tool.write_file", false),
    error: {
      type: RuleNotFound,
      message:
        /binding "FILES" has no auto-approval rule for "mcp\.tool\.write_file" that is on .*nothing was recorded; its rules that are on: "mcp\.tool\.create_directory"; list the workspace's rules with GetLog/,
    },
  },
  {
    name: "turning off a rule a second time is refused (it is off already)",
    given: [
      ...base,
      rule("FILES", "mcp.tool.create_directory"),
      rule("FILES", "mcp.tool.create_directory", false),
    ],
    when: setRule("FILES", "mcp.tool.create_directory", false),
    error: { type: RuleNotFound, message: /its rules that are on: none/ },
  },
  {
    name: "turning off a rule on an unknown binding is refused as an unknown binding",
    given: base,
    when: setRule("SLACK", "mcp.tool.post", false),
    error: { type: UnknownBinding, message: /"SLACK" is not a binding/ },
  },
  {
    name: "turning off a rule stored before kinds were published is allowed",
    given: [...base, rule("OLD", "mcp.tool.x")],
    when: setRule("OLD", "mcp.tool.x", false),
    expect: [rule("OLD", "mcp.tool.x", false)],
  },
  // ---- SubmitAction retries ----
  {
    name: "a retried submission identical to the recorded one appends nothing",
    given: [...base, submitted("FILES", "a", [], autoDesc("mcp.tool.create_directory"))],
    when: submit("a", autoDesc("mcp.tool.create_directory")),
    expect: [],
  },
  {
    name: "a retry is recognized after the action was decided",
    given: [...base, submitted("FILES", "a"), approved(4)],
    when: submit("a"),
    expect: [],
  },
  {
    name: "a retry is recognized after the workspace latched (the write was recorded before)",
    given: [...base, submitted("FILES", "a"), observed("OLD", true), latched(5, "OLD")],
    when: submit("a"),
    expect: [],
  },
  {
    name: "the same local id with another payload is a conflict naming what differs",
    given: [...base, submitted("FILES", "a")],
    when: submit("a", desc(), '{"path":"other"}'),
    error: { type: DuplicateLocalId, message: /as action 4 with a different payload; a retry must resend/ },
  },
  {
    name: "the same local id from another execution is a conflict",
    given: [...base, submitted("FILES", "a")],
    when: submit("a", desc(), "{}", "x2"),
    error: { type: DuplicateLocalId, message: /with a different execution/ },
  },
  // ---- AuthorizeObservation retries ----
  {
    name: "a read with a request id records it",
    given: base,
    when: read("r1"),
    expect: [observed("FILES", false, "r1")],
  },
  {
    name: "a retried read (same request id and description) records nothing",
    given: [...base, observed("FILES", false, "r1")],
    when: read("r1"),
    expect: [],
  },
  {
    name: "the same request id in another execution is another read",
    given: [...base, observed("FILES", false, "r1")],
    when: read("r1", 0, "x2"),
    expect: [
      {
        type: "ObservationRecorded",
        data: { ...(observed("FILES", false, "r1").data as object), executionId: "x2" },
      } as Ev,
    ],
  },
  {
    name: "the same request id with another description is a conflict",
    given: [...base, observed("FILES", false, "r1")],
    when: read("r1", 1),
    error: {
      type: DuplicateObservationRequest,
      message: /"r1" was already used on binding "FILES" for observation 4/,
    },
  },
  {
    name: "reads without a request id are never taken for retries",
    given: [...base, observed("FILES")],
    when: read(""),
    expect: [observed("FILES")],
  },
];

describe("rules and retries", () => {
  runDeciderTable(rows);

  test("a retried read finds the observation it recorded", () => {
    const state = given([...base, observed("OLD"), observed("FILES", false, "r1")]);
    assert.equal(recordedObservationId(state, { binding: "FILES", executionId: "x1", requestId: "r1" }), 5);
    assert.equal(
      recordedObservationId(state, { binding: "FILES", executionId: "x1", requestId: "" }),
      undefined,
    );
  });
});
