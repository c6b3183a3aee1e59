import assert from "node:assert/strict";
import { test } from "node:test";
import { ActionStatus } from "@gatehouse/proto";
import { actionsTable, terminalSafe } from "../src/output.ts";

test("agent-controlled text cannot move the cursor, retitle the window or reorder text on a terminal", () => {
  const hostile = "Z\u001b[1A\u001b[2K\r│ 999 │ applied │\u001b]0;pwned\u0007 \u202eevil\u009b";
  const safe = terminalSafe(hostile);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: asserting no control character survives
  assert.doesNotMatch(safe, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
  assert.match(safe, /\\x1b\[1A/);
  assert.match(safe, /\\u202e/);
  assert.equal(terminalSafe("line one\n\tline two"), "line one\n\tline two", "newlines and tabs stay");
});

test("the actions table carries no colour codes and shows a cascade's reason once", () => {
  const text = actionsTable([
    {
      id: 9,
      workspaceId: "w1",
      binding: "FILES",
      localId: "l",
      description: undefined,
      status: ActionStatus.ACTION_STATUS_REJECTED,
      dependsOn: [8],
      caller: undefined,
      submittedAt: "",
      decidedBy: "service:approval",
      decidedAt: "",
      reason: "needed action 8, which did not complete",
      cascadedFrom: 8,
      resultJson: "",
      outcomeUnknown: false,
      executionId: "",
      lastRevision: 12,
    },
  ]);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: asserting no ESC reaches the terminal
  assert.doesNotMatch(text, /\u001b/);
  assert.match(text, /rejected/);
  assert.equal(text.match(/needed action 8/g)?.length, 1);
});
