import assert from "node:assert/strict";
import { test } from "node:test";
import { CUT_MARKER, fenceUntrusted, truncateUtf8 } from "@gatehouse/gatekeeper-kit";
import { describeRead, describeToolCall } from "../src/describe.ts";

test("the fence is longer than any backtick run inside the untrusted text", () => {
  const { markdown } = fenceUntrusted("a ```` b", 1000);
  assert.ok(markdown.startsWith("`````text\n"));
  assert.ok(markdown.endsWith("\n`````"));
});

test("text over budget is cut on a code point boundary and marked incomplete", () => {
  const { text, cut } = truncateUtf8("ééé", 3);
  assert.equal(text, "é");
  assert.ok(cut);
  const f = fenceUntrusted("x".repeat(100), 10);
  assert.equal(f.complete, false);
  assert.ok(f.markdown.includes(CUT_MARKER));
});

test("the approver description fences tool description and arguments and reports completeness", () => {
  const d = describeToolCall("memory", "create_entities", "Creates ``` things", {
    entities: [{ name: "```" }],
  });
  assert.equal(d.title, "Call create_entities on memory");
  assert.ok(d.descriptionIsComplete);
  assert.match(d.description, /````text\nCreates ``` things\n````/);
  assert.match(d.description, /````json\n\{\n {2}"entities"/);
});

test("large arguments are bounded to the budget and flagged with a warning", () => {
  const d = describeToolCall("memory", "create_entities", "d", { blob: "y".repeat(20_000) });
  assert.equal(d.descriptionIsComplete, false);
  assert.match(d.description, /Warning: this description was cut/);
  assert.ok(Buffer.byteLength(d.description) < 16 * 1024 + 4 * 1024 + 1024);
});

test("a tool name with Markdown syntax stays inside its code span in the headline; the plain-text title shows it as it is", () => {
  const d = describeToolCall("mem", "x`](http://evil)", undefined, {});
  assert.equal(d.title, "Call x`](http://evil) on mem");
  assert.ok(d.description.startsWith("Call MCP tool ``x`](http://evil)`` on server `mem`.\n"), d.description);
});

test("tool and server names keep every script; an RLO and a zero-width space show as tokens in the title and the headline", () => {
  const d = describeToolCall("Ünïcødé", "日本語\u202E_tool\u200B", undefined, {});
  assert.equal(d.title, "Call 日本語⟨U+202E⟩_tool⟨U+200B⟩ on Ünïcødé");
  assert.ok(d.description.startsWith("Call MCP tool `日本語⟨U+202E⟩_tool⟨U+200B⟩` on server `Ünïcødé`."));
  assert.equal(describeRead("Ünïcødé", "読む", {}).title, "Read 読む on Ünïcødé");
});

test("a read or a write whose arguments hold a direction control names the argument in the trusted text", () => {
  const args = { path: "/data/invoice\u202Etxt.exe" };
  for (const description of [
    describeRead("files", "read_text_file", args).description,
    describeToolCall("files", "write_file", undefined, args).description,
  ]) {
    const trusted = description.slice(0, description.indexOf("```"));
    assert.ok(
      trusted.includes(
        "- ⚠ Arguments `path` contains invisible or direction-control characters: U+202E RIGHT-TO-LEFT OVERRIDE",
      ),
      trusted,
    );
    assert.ok(
      description.includes('"path": "/data/invoice\u202Etxt.exe"'),
      "the fenced arguments keep the bytes",
    );
  }
});

test("multi-line text arguments are fenced text blocks in the file's language, never escaped JSON", () => {
  const d = describeToolCall("files", "edit_file", undefined, {
    path: "docs/a.md",
    edits: [{ oldText: "one\ntwo", newText: "uno\n```\ndos\u202E\n" }],
  });
  assert.ok(d.descriptionIsComplete);
  assert.ok(!d.description.includes("\\n"), "no escaped line breaks");
  assert.match(
    d.description,
    /the multi-line text of `edits\[0\]\.oldText`, `edits\[0\]\.newText` is shown after them as text/,
  );
  assert.match(d.description, /"oldText": "\(text shown below as edits\[0\]\.oldText\)"/);
  assert.match(
    d.description,
    /Argument `edits\[0\]\.oldText` as text \(untrusted, exactly as staged; 2 lines, 7 bytes, no line break at the end\):\n\n```markdown\none\ntwo\n```/,
  );
  assert.match(
    d.description,
    /; 3 lines, [0-9]+ bytes, ends with a line break\):\n\n````markdown\nuno\n```\ndos\u202E\n````/,
  );
  assert.match(
    d.description,
    /- ⚠ Arguments `edits\[0\]\.newText` contains invisible or direction-control characters: U\+202E/,
  );
  const plain = describeToolCall("files", "write_file", undefined, { path: "notes", content: "a\nb" });
  assert.match(plain.description, /```text\na\nb\n```/);
});
