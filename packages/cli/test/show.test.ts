/** `gatehouse show`'s text: multi-line text as lines, invisible characters as tokens, risks first, dependents named. */
import assert from "node:assert/strict";
import { test } from "node:test";
import { type ActionRecord, ActionStatus } from "@gatehouse/proto";
import { showText } from "../src/show-text.ts";

function record(id: number, dependsOn: number[], text: string): ActionRecord {
  return {
    id,
    workspaceId: "w1",
    binding: "FILES",
    localId: `~${id}`,
    description: {
      title: "Call write_file on files",
      description: text,
      descriptionIsComplete: true,
      delivery: 1,
      dependsOn: [],
      implementsRevert: 0,
      autoApprovable: false,
      actionKind: undefined,
      classifiedBy: "mcp",
      egress: false,
      summary: "Write /srv/pay\u202Etxt.exe",
      fields: [{ name: "content", value: "line one\nline two" }],
      risks: [{ kind: "content", reason: "invisible characters in content" }],
      preflightWarnings: ["parent directory /srv is missing"],
      preview: "",
    },
    status: ActionStatus.ACTION_STATUS_PENDING,
    dependsOn,
    caller: { kind: "agent", id: "c" },
    submittedAt: "",
    decidedBy: "",
    decidedAt: "",
    reason: "",
    cascadedFrom: 0,
    resultJson: "",
    outcomeUnknown: false,
    executionId: "",
    lastRevision: id,
    chatStartedBy: "",
    descriptionDigest: "sha256:abc",
    withdrawnBy: "",
  } as ActionRecord;
}

test("show prints multi-line text as lines, invisible characters as tokens, risks before the text, dependents and the digest", () => {
  const a = record(1, [], "Writes:\n```\nhello\u200Bworld\nsecond line\n```");
  const text = showText(a, [a, record(2, [1], "")]);
  assert.match(text, /^#1 Write \/srv\/pay⟨U\+202E⟩txt\.exe$/m);
  assert.match(text, /^hello⟨U\+200B⟩world$/m);
  assert.match(text, /^second line$/m);
  assert.match(text, /^ {2}content: line one\n {4}line two$/m);
  assert.doesNotMatch(text, /[\u202E\u200B]|\\n/u);
  assert.ok(text.indexOf("RISK content: invisible") < text.indexOf("hello"), "risks come before the text");
  assert.match(text, /^warning: parent directory \/srv is missing$/m);
  assert.match(text, /^dependents: #2$/m);
  assert.match(text, /^description digest: sha256:abc$/m);
});

test("show names the action's execution (what `gatehouse review --turn` takes), and no line for none", () => {
  const a = { ...record(3, [], ""), executionId: "ex-9" };
  assert.match(showText(a, [a]), /^execution: ex-9$/m);
  assert.doesNotMatch(showText(record(4, [], ""), []), /^execution:/m);
});
