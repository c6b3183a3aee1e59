/**
 * The CLI's table renderer (src/table.ts) against cli-table3, the library it replaces for speed:
 * the same bytes for the same cells (ASCII, wide CJK and emoji, empty and short rows), and 5,000
 * action rows rendered in well under a second (cli-table3 took 7 s).
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { ActionRecord, ActionStatus } from "@gatehouse/proto";
import Table from "cli-table3";
import { actionsTable } from "../src/output.ts";
import { renderTable } from "../src/table.ts";

function cliTable3(head: string[], rows: string[][]): string {
  const t = new Table({ head, style: { head: [], border: [] } });
  for (const r of rows) t.push(r);
  return t.toString();
}

test("renderTable prints what cli-table3 prints for the same cells", () => {
  const head = ["id", "status", "title", "chat of"];
  const cases: string[][][] = [
    [],
    [["1", "pending", "create_entities: alice", "dev-approver"]],
    [
      ["10", "applied", "写入文件 報告.txt", ""],
      ["11", "failed", "emoji 🚀 title ⟨U+202E⟩", "a-much-longer-person-name"],
      ["12", "", "", ""],
    ],
  ];
  for (const rows of cases) assert.equal(renderTable(head, rows), cliTable3(head, rows));
});

test("actionsTable renders 5,000 actions in well under a second", () => {
  const actions = Array.from({ length: 5000 }, (_, i) =>
    ActionRecord.fromPartial({
      id: i + 10,
      status: ActionStatus.ACTION_STATUS_PENDING,
      binding: "MEMORY",
      description: { title: `create_entities: entity number ${i}` },
      dependsOn: i % 3 ? [i + 9] : [],
      chatStartedBy: "user:dev-approver",
    }),
  );
  actionsTable(actions); // warm up (JIT), so the figure is the renderer's, not the compiler's
  // CPU time of this process, not wall time: other work on a busy machine does not count.
  const started = process.cpuUsage();
  const text = actionsTable(actions);
  const used = process.cpuUsage(started);
  const ms = (used.user + used.system) / 1000;
  assert.equal(text.split("\n").length, 3 + 2 * 5000);
  assert.ok(ms < 1000, `5,000 rows took ${Math.round(ms)} ms of CPU`);
});
