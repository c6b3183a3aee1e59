import assert from "node:assert/strict";
import { test } from "node:test";
import { buildDescription, CUT_WARNING, inlineSafe } from "../src/describe.ts";
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

test("names shown outside fences cannot inject Markdown", () => {
  assert.equal(inlineSafe("x`](http://evil)"), "x???http://evil?");
  assert.equal(inlineSafe("a".repeat(300)).length, 128);
  assert.equal(
    inlineSafe("Edit the guide\n# heading\t*x*"),
    "Edit the guide?? heading??x?",
    "spaces stay; line breaks do not",
  );
});
