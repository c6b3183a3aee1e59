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

test("show says how an action ended: an outcome unknown with its reason and what to do, a failure's reason, a cascade, who decided, an applied result", () => {
  const unknown = {
    ...record(5, [], ""),
    status: ActionStatus.ACTION_STATUS_FAILED,
    outcomeUnknown: true,
    decidedBy: "user:alice",
    decidedAt: "2026-12-05T10:00:00Z",
    reason: "calling write_file at http://127.0.0.1:4000: the connection closed before the answer came",
  };
  const text = showText(unknown, [unknown]);
  assert.match(text, /^status: failed \(OUTCOME UNKNOWN\)$/m);
  assert.match(
    text,
    /^outcome: UNKNOWN — the request may have reached the system; check there before doing it again$/m,
  );
  assert.match(text, /^reason: calling write_file at http:\/\/127\.0\.0\.1:4000: the connection closed/m);
  assert.match(text, /^decided by: user:alice at 2026-12-05T10:00:00Z$/m);

  const notSent = { ...unknown, outcomeUnknown: false, reason: "… was not sent: connection refused" };
  const failed = showText(notSent, [notSent]);
  assert.match(failed, /^status: failed$/m);
  assert.doesNotMatch(failed, /UNKNOWN/);
  assert.match(failed, /^reason: … was not sent: connection refused$/m);

  const cascaded = {
    ...record(6, [5], ""),
    status: ActionStatus.ACTION_STATUS_REJECTED,
    cascadedFrom: 5,
    reason: "action 5 failed",
  };
  assert.match(showText(cascaded, [cascaded]), /^cascaded from: #5$/m);

  const applied = {
    ...record(7, [], ""),
    status: ActionStatus.ACTION_STATUS_APPLIED,
    decidedBy: "user:bob",
    resultJson: JSON.stringify({ sha: "a".repeat(40), note: "\u202E".repeat(400) }),
  };
  const appliedText = showText(applied, [applied]);
  assert.match(appliedText, /^result: \{"sha":"a{40}"/m);
  assert.match(appliedText, /…$/m, "a long result is cut");
  assert.doesNotMatch(appliedText, /\u202E/u, "the result's invisible characters are tokens");

  assert.doesNotMatch(
    showText(record(8, [], ""), []),
    /^(decided by|reason|result|outcome):/m,
    "nothing for a pending action",
  );
});
