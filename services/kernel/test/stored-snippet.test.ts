/**
 * What CodeExecuted keeps of a snippet and its console: everything when within the bounds; past
 * them the code is cut at a character boundary and whole console lines are dropped from the end,
 * each marked truncated.
 */
import assert from "node:assert/strict";
import { test } from "node:test";
import { CODE_MAX_BYTES, CONSOLE_MAX_BYTES, storedSnippet } from "../src/stored-snippet.ts";

test("a snippet and console within the bounds are kept whole and not marked truncated", () => {
  const s = storedSnippet("export default () => 'é日本';", [
    { level: "log", text: "one" },
    { level: "error", text: "two\nlines" },
  ]);
  assert.deepEqual(s, {
    code: "export default () => 'é日本';",
    codeTruncated: false,
    console: ["log: one", "error: two\nlines"],
    consoleTruncated: false,
  });
});

test("code over 256 KiB is cut to at most 256 KiB without splitting a character, and marked", () => {
  // 3-byte characters placed so the byte limit falls inside one.
  const code = `x${"日".repeat(CODE_MAX_BYTES)}`;
  const s = storedSnippet(code, []);
  assert.equal(s.codeTruncated, true);
  const bytes = Buffer.byteLength(s.code, "utf8");
  assert.ok(bytes <= CODE_MAX_BYTES && bytes > CODE_MAX_BYTES - 3, `kept ${bytes} bytes`);
  assert.ok(!s.code.includes("\uFFFD"), "no broken character at the cut");
  assert.ok(code.startsWith(s.code));
});

test("a console over 64 KiB keeps whole lines from the start and is marked truncated", () => {
  const line = { level: "log", text: "a".repeat(1000) };
  const s = storedSnippet(
    "",
    Array.from({ length: 100 }, () => line),
  );
  assert.equal(s.consoleTruncated, true);
  assert.equal(s.console.length, Math.floor(CONSOLE_MAX_BYTES / 1005));
  assert.ok(s.console.every((l) => l === `log: ${"a".repeat(1000)}`));
});
