/**
 * What approvers see for file writes staged on the REAL filesystem MCP server (stdio, behind a
 * counting tee): a diff against the current content and a destructive risk for an overwrite, a
 * pre-flight warning for a missing parent directory, neither for a new file in a normal
 * directory, the edits' dry-run diff, multi-line content as text lines, and describe-reads that
 * are never observations and never the write itself. Plus the timeout bound, with a stalled reader.
 */
import assert from "node:assert/strict";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { after, before, test } from "node:test";
import type { ActionDescription } from "@gatehouse/proto";
import type { CatalogTool } from "../src/catalog.ts";
import { describeFileCall } from "../src/file-facts.ts";
import {
  callsReachingServer,
  countedStdio,
  FS_SERVER,
  type Harness,
  openBinding,
  startHarness,
  tempDir,
} from "./helpers.ts";

let h: Harness;
let tmp: ReturnType<typeof tempDir>;
let root: string;
let countFile: string;
let b: ReturnType<typeof openBinding>;

before(async () => {
  tmp = tempDir();
  root = join(tmp.dir, "allowed");
  countFile = join(tmp.dir, "calls.txt");
  mkdirSync(join(root, "docs"), { recursive: true });
  writeFileSync(join(root, "docs", "ledger.md"), "# Ledger\n\nalpha\nbeta\n");
  h = await startHarness({ servers: { fs: countedStdio(countFile, FS_SERVER, [root]) } });
  b = openBinding(h.client, "FS", "mcp://fs");
});
after(async () => {
  b.close();
  await h.close();
  tmp.remove();
});

/** Stages `tool(args)` and returns the submitted description. */
async function stage(tool: string, args: Record<string, unknown>): Promise<ActionDescription> {
  const p = await b.stub[tool](args);
  assert.equal(p.status, "pending");
  return h.approval.submissions.find((s) => s.actionId === p.actionId)!.description;
}

test("write_file over an existing file shows the diff and a destructive risk; the reads are not observations", async () => {
  const path = join(root, "docs", "ledger.md");
  const observations = h.approval.observationCalls.length;
  const d = await stage("write_file", { path, content: "# Ledger\n\nalpha\ngamma\n" });
  assert.equal(h.approval.observationCalls.length, observations, "describe-reads record nothing");
  assert.equal(callsReachingServer(countFile).filter((c) => c === "write_file").length, 0);
  assert.equal(readFileSync(path, "utf8"), "# Ledger\n\nalpha\nbeta\n", "nothing written");
  assert.match(
    d.description,
    /```diff\n--- .*ledger\.md\tcurrent\n\+\+\+ .*ledger\.md\tafter this call\n@@ -1,4 \+1,4 @@\n # Ledger\n \n alpha\n-beta\n\+gamma\n```/,
  );
  assert.deepEqual(
    d.risks.map((r) => r.kind),
    ["destructive"],
  );
  assert.match(d.risks[0]!.reason, /^replaces the existing file .*ledger\.md \(4 lines; −1 \+1\)$/);
  assert.deepEqual(d.preflightWarnings, []);
});

test("write_file into a missing directory carries the pre-flight warning", async () => {
  const dir = join(root, "missing", "deeper");
  const d = await stage("write_file", { path: join(dir, "notes.md"), content: "x\n" });
  assert.deepEqual(d.preflightWarnings, [
    `the parent directory ${dir} does not exist: the write would fail (ENOENT)`,
  ]);
  assert.deepEqual(d.risks, [], "a new file replaces nothing");
});

test("a pending create_directory of this session is named in the warning", async () => {
  const dir = join(root, "planned");
  const mk = await b.stub.create_directory({ path: dir });
  const d = await stage("write_file", { path: join(dir, "a.md"), content: "x\n" });
  assert.match(
    d.preflightWarnings[0] ?? "",
    new RegExp(`pending action ${mk.actionId} \\(create_directory\\)`),
  );
});

test("a new Markdown file under a normal directory has no risk, no warning, and its content as text lines", async () => {
  const d = await stage("write_file", {
    path: join(root, "docs", "new.md"),
    content: '# New\n\n- one\n- two "quoted"\n',
  });
  assert.deepEqual(d.risks, []);
  assert.deepEqual(d.preflightWarnings, []);
  assert.ok(!d.description.includes("```diff"), "no diff for a new file");
  assert.match(d.description, /The file does not exist now: the call creates it\./);
  assert.match(d.description, /```markdown\n# New\n\n- one\n- two "quoted"\n```/, d.description);
  assert.ok(!d.description.includes("\\n"), "no escaped line breaks");
  assert.match(d.description, /"content": "\(text shown below as content\)"/);
  assert.equal(d.preview, "# New\n\n- one");
});

test("edit_file shows the server's dry-run diff, is not pinned as destructive, and changes nothing", async () => {
  const path = join(root, "docs", "ledger.md");
  const d = await stage("edit_file", { path, edits: [{ oldText: "beta", newText: "delta" }] });
  assert.match(d.description, /```diff\n[\s\S]*-beta\n\+delta\n[\s\S]*```/);
  assert.equal(d.preview, "", "one-line edits have no main text: the diff is in the description");
  assert.deepEqual(d.risks, [], "a targeted edit shown line by line is not pinned as destructive");
  assert.match(d.description, /The edits change 1 line\(s\) and add 1 \(the server's dry run/);
  assert.equal(readFileSync(path, "utf8"), "# Ledger\n\nalpha\nbeta\n", "the dry run wrote nothing");
  const bad = await stage("edit_file", { path, edits: [{ oldText: "nowhere", newText: "x" }] });
  assert.match(bad.preflightWarnings[0] ?? "", /a dry run of these edits .* failed .*: the edit would fail/);
});

test("move_file onto an existing destination warns before approval", async () => {
  const d = await stage("move_file", {
    source: join(root, "docs", "ledger.md"),
    destination: join(root, "docs", "new-place.md"),
  });
  assert.deepEqual(d.preflightWarnings, []);
  writeFileSync(join(root, "docs", "taken.md"), "x");
  const taken = await stage("move_file", {
    source: join(root, "docs", "ledger.md"),
    destination: join(root, "docs", "taken.md"),
  });
  assert.match(
    taken.preflightWarnings[0] ?? "",
    /the destination .*taken\.md already exists: the move would fail/,
  );
  assert.ok(existsSync(join(root, "docs", "ledger.md")));
});

test("a describe-read that does not answer in time becomes a warning; staging goes on", async () => {
  const tool = (name: string): [string, CatalogTool] => [
    name,
    {
      tool: { name, inputSchema: { type: "object" } },
      classification: {} as CatalogTool["classification"],
    },
  ];
  const tools = new Map([tool("get_file_info"), tool("read_text_file"), tool("write_file")]);
  const started = Date.now();
  const f = await describeFileCall({
    tool: "write_file",
    args: { path: "/x/a.md", content: "a\n" },
    tools,
    call: () => new Promise(() => {}),
    timeoutMs: 50,
  });
  assert.ok(Date.now() - started < 1000, "bounded by the deadline");
  assert.deepEqual(f?.preflightWarnings, [
    "the current content of /x/a.md could not be read (timed out): no diff is shown",
  ]);
  assert.equal(f?.knowsDestructive, false, "the tool's own destructive risk stays");
  const none = await describeFileCall({
    tool: "create_entities",
    args: {},
    tools,
    call: () => new Promise(() => {}),
  });
  assert.equal(none, null);
});
