import assert from "node:assert/strict";
import { test } from "node:test";
import { buildDescription, CUT_WARNING } from "../src/describe.ts";
import { CUT_MARKER, fenceUntrusted, truncateUtf8 } from "../src/fence.ts";

test("the fence is longer than any backtick run inside the untrusted text", () => {
  const { markdown } = fenceUntrusted("a ```` b ``", 1000, "diff");
  assert.ok(markdown.startsWith("`````diff\n"));
  assert.ok(markdown.endsWith("\n`````"));
  assert.equal(fenceUntrusted("plain", 100).markdown, "```text\nplain\n```");
});

test("text over budget is cut on a code point boundary, marked inside the fence and incomplete", () => {
  assert.deepEqual(truncateUtf8("ééé", 3), { text: "é", cut: true });
  assert.deepEqual(truncateUtf8("abc", 3), { text: "abc", cut: false });
  const f = fenceUntrusted("x".repeat(100), 10);
  assert.equal(f.complete, false);
  assert.ok(f.markdown.includes(`xxxxxxxxxx\n${CUT_MARKER}\n\`\`\``));
});

test("a description with blocks within budget is complete and has no warning", () => {
  const d = buildDescription({
    headline: "Commit 1 file to `main`.",
    details: ["Author: agent"],
    blocks: [{ label: "Diff (untrusted):", text: "+hello", lang: "diff", maxBytes: 100 }],
  });
  assert.equal(d.descriptionIsComplete, true);
  assert.equal(
    d.description,
    "Commit 1 file to `main`.\n\nAuthor: agent\n\nDiff (untrusted):\n\n```diff\n+hello\n```",
  );
});

test("a block cut to its budget makes the description incomplete with a warning after the headline", () => {
  const d = buildDescription({
    headline: "Commit.",
    blocks: [
      { label: "A:", text: "a".repeat(50), maxBytes: 10 },
      { label: "B:", text: "b", maxBytes: 10 },
    ],
  });
  assert.equal(d.descriptionIsComplete, false);
  assert.ok(d.description.startsWith(`Commit.\n\n${CUT_WARNING}\n\n`));
  assert.ok(!d.description.includes("a".repeat(11)));
});

test("totalBytes bounds the whole description, even with hostile backtick runs and multi-byte text", () => {
  for (const text of ["x".repeat(5000), "`".repeat(5000), "é`".repeat(3000), "short"]) {
    const d = buildDescription({
      headline: "Write file.",
      blocks: [
        { label: "Content:", text, maxBytes: 64 * 1024 },
        { label: "Old content:", text, maxBytes: 64 * 1024 },
      ],
      totalBytes: 1024,
    });
    assert.ok(Buffer.byteLength(d.description) <= 1024, `bounded for ${text.slice(0, 8)}`);
    assert.equal(d.descriptionIsComplete, text === "short");
  }
});

test("a totalBytes too small for the trusted text is a clear RangeError", () => {
  assert.throws(
    () => buildDescription({ headline: "h".repeat(200), blocks: [], totalBytes: 100 }),
    /totalBytes 100 cannot hold the trusted text/,
  );
});

test("a description names each value that holds invisible or direction-control characters, in its trusted text", () => {
  const args = {
    path: "invoice\u202Etxt.exe",
    content: "pay\u200Bpal",
    edits: [{ newText: "ok", old: "\uFEFF" }],
  };
  const d = buildDescription({
    headline: "Call MCP tool `write_file`.",
    blocks: [
      { label: "Tool description (untrusted, from the server):", text: "Writes a file.", maxBytes: 100 },
      {
        label: "Arguments (untrusted, exactly as staged):",
        text: JSON.stringify(args, null, 2),
        lang: "json",
        maxBytes: 1000,
      },
      { label: "Commit message (untrusted):", text: "fix\u2066 it", maxBytes: 1000 },
    ],
  });
  const fenceAt = d.description.indexOf("```");
  const trusted = d.description.slice(0, fenceAt);
  assert.ok(trusted.includes("**⚠ Hidden characters:"), trusted);
  assert.ok(
    trusted.includes(
      "- ⚠ Arguments `path` contains invisible or direction-control characters: U+202E RIGHT-TO-LEFT OVERRIDE\n",
    ),
    trusted,
  );
  assert.ok(
    trusted.includes(
      "- ⚠ Arguments `content` contains invisible or direction-control characters: U+200B ZERO WIDTH SPACE\n",
    ),
  );
  assert.ok(
    trusted.includes(
      "- ⚠ Arguments `edits[0].old` contains invisible or direction-control characters: U+FEFF ZERO WIDTH NO-BREAK SPACE\n",
    ),
  );
  assert.ok(
    trusted.includes(
      "- ⚠ Commit message contains invisible or direction-control characters: U+2066 LEFT-TO-RIGHT ISOLATE\n",
    ),
  );
  assert.ok(!trusted.includes("Tool description contains"), "a clean block is not named");
  assert.ok(
    d.description.includes('"path": "invoice\u202Etxt.exe"'),
    "the fenced text keeps the exact bytes",
  );
  assert.equal(d.descriptionIsComplete, true);
});

test("a clean description has no hidden-characters warning", () => {
  const d = buildDescription({
    headline: "Call.",
    blocks: [
      { label: "Arguments:", text: JSON.stringify({ path: "Grüße ❤️.txt" }), lang: "json", maxBytes: 100 },
    ],
  });
  assert.ok(!d.description.includes("Hidden characters"));
});

test("the warning names a hostile JSON key safely and stays bounded; totalBytes still holds", () => {
  const hostile: Record<string, string> = {};
  for (let i = 0; i < 40; i++)
    hostile[`k${i}\u202E\`](x)\n# h`] = String.fromCodePoint(
      ...Array.from({ length: 30 }, (_, j) => 0xe0020 + j),
    );
  const text = JSON.stringify(hostile, null, 2);
  const d = buildDescription({
    headline: "Call.",
    blocks: [{ label: "Arguments:", text, lang: "json", maxBytes: 64 * 1024 }],
    totalBytes: 4 * 1024,
  });
  assert.ok(Buffer.byteLength(d.description) <= 4 * 1024);
  assert.equal(d.descriptionIsComplete, false, "the arguments were cut to fit");
  const trusted = d.description.slice(0, d.description.indexOf("```"));
  assert.ok(trusted.includes("- ⚠ Arguments ``k0⟨U+202E⟩`](x) # h (the key)`` contains"), trusted);
  assert.ok(trusted.includes(", and 24 more"), "at most six code points are named per value");
  assert.ok(trusted.includes("- … and 72 more value(s)"), "at most eight values are listed");
  assert.ok(!/\u202E/.test(trusted), "no raw direction control in the trusted text");
  assert.ok(!trusted.includes("\n# h"), "no Markdown heading forged by a key");
});

test("a block that is not valid JSON, or plain text cut by its budget, is named as a whole, also for what the cut removed", () => {
  const d = buildDescription({
    headline: "Commit.",
    blocks: [
      { label: "Diff (untrusted):", text: `${"x".repeat(200)}\u200B`, lang: "diff", maxBytes: 50 },
      { label: "Broken:", text: '{"a": "\u202E', lang: "json", maxBytes: 50, name: "The payload" },
    ],
  });
  assert.ok(
    d.description.includes(
      "- ⚠ Diff contains invisible or direction-control characters: U+200B ZERO WIDTH SPACE",
    ),
  );
  assert.ok(
    d.description.includes("- ⚠ The payload contains invisible or direction-control characters: U+202E"),
  );
});
