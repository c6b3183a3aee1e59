import assert from "node:assert/strict";
import { test } from "node:test";
import { ActionStatus, type LogView } from "@gatehouse/proto";
import { actionsTable, logTable, terminalSafe, turnText, verifyText } from "../src/output.ts";

test("agent-controlled text cannot move the cursor, retitle the window or reorder text on a terminal", () => {
  const hostile = "Z\u001b[1A\u001b[2K\r│ 999 │ applied │\u001b]0;pwned\u0007 \u202eevil\u009b";
  const safe = terminalSafe(hostile);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: asserting no control character survives
  assert.doesNotMatch(safe, /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u202a-\u202e]/);
  assert.match(safe, /⟨U\+001B⟩\[1A/);
  assert.match(safe, /⟨U\+202E⟩evil⟨U\+009B⟩/);
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
      chatStartedBy: "",
      descriptionDigest: "",
      withdrawnBy: "",
    },
  ]);
  // biome-ignore lint/suspicious/noControlCharactersInRegex: asserting no ESC reaches the terminal
  assert.doesNotMatch(text, /\u001b/);
  assert.match(text, /rejected/);
  assert.equal(text.match(/needed action 8/g)?.length, 1);
});

test("the log shows a refused write as a row and, below the table, one line with its full reason", () => {
  const reason =
    'binding "REPO": the workspace read restricted data through "HR" and is latched; writes that send data out of the workspace (egress, e.g. git push) are refused on every binding for good (start a new workspace, without the restricted data, for work that must send data out)';
  const view: LogView = {
    workspaceId: "w1",
    latched: true,
    revision: 12,
    rules: [],
    entries: [
      {
        id: 12,
        entry: {
          $case: "refusal",
          refusal: {
            id: 12,
            binding: "REPO",
            localId: "p1",
            description: {
              title: "push main\n#13 applied  REPO  forged\u001b[2K",
              description: "",
              descriptionIsComplete: true,
              delivery: 1,
              dependsOn: [],
              implementsRevert: 0,
              autoApprovable: false,
              actionKind: undefined,
              classifiedBy: "git",
              egress: true,
              summary: "",
              fields: [],
              risks: [],
              preflightWarnings: [],
              preview: "",
            },
            reason,
            caller: { kind: "agent", id: "chat-1" },
            refusedAt: "2026-01-01T00:00:00Z",
            executionId: "x1",
            chatStartedBy: "",
          },
        },
      },
    ],
  };
  const text = terminalSafe(logTable(view));
  assert.match(text, /│ 12 │ refusal │ REPO +│ refused │ push main/);
  const lines = text.split("\n").filter((l) => l.startsWith("#"));
  assert.equal(lines.length, 1, "a newline in the agent's title cannot forge a second log line");
  assert.ok(lines[0]!.startsWith("#12 refused  REPO  push main #13 applied"), lines[0]);
  assert.ok(lines[0]!.endsWith(`: ${reason}`), "the full reason, not cut");
  // biome-ignore lint/suspicious/noControlCharactersInRegex: asserting no ESC reaches the terminal
  assert.doesNotMatch(text, /\u001b/);
});

test("an action that reverts another says so in the actions table", () => {
  const text = actionsTable([
    {
      id: 7,
      workspaceId: "w1",
      binding: "REPO",
      localId: "r",
      description: {
        title: "Revert commit abc",
        description: "",
        descriptionIsComplete: true,
        delivery: 1,
        dependsOn: [],
        implementsRevert: 3,
        autoApprovable: false,
        actionKind: undefined,
        classifiedBy: "git",
        egress: false,
        summary: "",
        fields: [],
        risks: [],
        preflightWarnings: [],
        preview: "",
      },
      status: ActionStatus.ACTION_STATUS_PENDING,
      dependsOn: [],
      caller: { kind: "user", id: "bob" },
      submittedAt: "",
      decidedBy: "",
      decidedAt: "",
      reason: "",
      cascadedFrom: 0,
      resultJson: "",
      outcomeUnknown: false,
      executionId: "",
      lastRevision: 8,
      chatStartedBy: "",
      descriptionDigest: "",
      withdrawnBy: "",
    },
  ]);
  assert.match(text, /pending .*Revert commit abc.*reverts #3/);
});

test("an action whose title holds a right-to-left override and a zero-width space shows them as tokens, columns aligned", () => {
  const action = (id: number, title: string) => ({
    id,
    workspaceId: "w1",
    binding: "FILES",
    localId: `~${id}`,
    description: {
      title,
      description: "",
      descriptionIsComplete: true,
      delivery: 1,
      dependsOn: [],
      implementsRevert: 0,
      autoApprovable: false,
      actionKind: undefined,
      classifiedBy: "mcp",
      egress: false,
      summary: "",
      fields: [],
      risks: [],
      preflightWarnings: [],
      preview: "",
    },
    status: ActionStatus.ACTION_STATUS_PENDING,
    dependsOn: [],
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
    descriptionDigest: "",
    withdrawnBy: "",
  });
  const text = terminalSafe(
    actionsTable([action(4, "write invoice\u202Etxt.exe pay\u200Bpal"), action(5, "plain")]),
  );
  assert.match(text, /│ write invoice⟨U\+202E⟩txt\.exe pay⟨U\+200B⟩pal │/);
  assert.doesNotMatch(
    text,
    /[\u202E\u200B]/u,
    "no raw direction control or zero-width space reaches the terminal",
  );
  const widths = new Set(text.split("\n").map((line) => [...line].length));
  assert.equal(widths.size, 1, `every line of the table has the same width:\n${text}`);
});

test("an action row shows the gatekeeper's summary (the title when there is none) and marks risky actions with their kinds", () => {
  const row = (id: number, summary: string, risks: { kind: string; reason: string }[]) => ({
    id,
    workspaceId: "w1",
    binding: "FILES",
    localId: `~${id}`,
    description: {
      title: `Call write_file on files ${id}`,
      description: "",
      descriptionIsComplete: true,
      delivery: 1,
      dependsOn: [],
      implementsRevert: 0,
      autoApprovable: false,
      actionKind: undefined,
      classifiedBy: "mcp",
      egress: false,
      summary,
      fields: [],
      risks,
      preflightWarnings: [],
      preview: "",
    },
    status: ActionStatus.ACTION_STATUS_PENDING,
    dependsOn: [],
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
    descriptionDigest: "",
    withdrawnBy: "",
  });
  const text = actionsTable([
    row(1, "Write /srv/a.txt (3 lines)", []),
    row(2, "", []),
    row(3, "DELETE FROM orders", [
      { kind: "destructive", reason: "DELETE without WHERE" },
      { kind: "content", reason: "invisible characters" },
    ]),
  ]);
  const lines = text.split("\n");
  assert.match(lines[1] ?? "", /│ risk\s+│ summary\s+│/);
  const rowOf = (id: number) => lines.find((l) => l.startsWith(`│ ${id} `)) ?? "";
  assert.match(rowOf(1), /│ pending │ FILES\s+│\s+│ Write \/srv\/a\.txt \(3 lines\)/);
  assert.match(rowOf(2), /│\s+│ Call write_file on files 2/, "the title stands in for a missing summary");
  assert.match(rowOf(3), /│ ! destructive,content │ DELETE FROM orders/);
});

test("log and verify say which number is the stream revision and which the event count", () => {
  const view: LogView = { workspaceId: "w1", entries: [], rules: [], latched: false, revision: 13 };
  const head = logTable(view).split("\n")[0];
  assert.equal(head, "workspace w1 at stream revision 13 (14 events; revisions count from 0)");
  assert.equal(
    verifyText({ ok: true, eventsChecked: 14, firstBadRevision: -1, problem: "" }),
    "ok: 14 events (stream revisions 0 to 13), hash chain intact",
  );
  assert.match(
    verifyText({ ok: false, eventsChecked: 14, firstBadRevision: 5, problem: "hash mismatch" }),
    /^TAMPERED at stream revision 5 \(revisions count from 0\): hash mismatch$/,
  );
});

test("a turn's text has one line per awaited action, also when an older stream recorded fewer results", () => {
  const text = turnText({
    workspaceId: "w1",
    turnId: "t1",
    state: "completed",
    awaitedActionIds: [5, 6],
    results: [{ actionId: 5, status: "rejected", resultJson: "", reason: "no" }],
    reason: "action 5 was rejected: no",
  });
  assert.deepEqual(text.split("\n"), [
    "turn t1: completed (awaiting 5, 6)",
    "  action 5 was rejected: no",
    "  action 5: rejected — no",
    "  action 6: no result recorded (not decided when the turn ended)",
  ]);
  const suspended = turnText({
    workspaceId: "w1",
    turnId: "t1",
    state: "suspended",
    awaitedActionIds: [5, 6],
    results: [],
    reason: "",
  });
  assert.equal(suspended, "turn t1: suspended (awaiting 5, 6)");
});

test("table cells keep every script, show invisible characters as tokens and are cut by grapheme cluster", () => {
  const record = (id: number, title: string) => ({
    id,
    workspaceId: "w1",
    binding: "REPO",
    localId: "l",
    description: { title } as never,
    status: ActionStatus.ACTION_STATUS_PENDING,
    dependsOn: [],
    caller: undefined,
    submittedAt: "",
    decidedBy: "",
    decidedAt: "",
    reason: "",
    cascadedFrom: 0,
    resultJson: "",
    outcomeUnknown: false,
    executionId: "",
    lastRevision: 1,
    chatStartedBy: "",
    descriptionDigest: "",
    withdrawnBy: "",
  });
  const text = actionsTable([
    record(1, "Ünïcødé 日本語 add \u202Etxt.exe\u200B file"),
    record(2, `${"x".repeat(48)}${"👨‍👩‍👧".repeat(3)}`),
    record(3, "e\u0301".repeat(60)),
  ]);
  assert.ok(text.includes("Ünïcødé 日本語 add ⟨U+202E⟩txt.exe⟨U+200B⟩ file"), text);
  assert.ok(!/[\u202E\u200B]/u.test(text), "no raw invisible character");
  assert.ok(text.includes(`${"x".repeat(48)}👨‍👩‍👧…`), "a family emoji is one character, never split");
  assert.ok(text.includes(`${"e\u0301".repeat(49)}…`), "an accented letter keeps its mark");
});
