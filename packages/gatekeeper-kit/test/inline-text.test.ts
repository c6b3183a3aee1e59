import assert from "node:assert/strict";
import { test } from "node:test";
import { codeSpan, INLINE_MAX_GRAPHEMES, inlineSafe, oneLine } from "../src/inline-text.ts";

/** The acceptance title of issue 33: two scripts, an RLO and a zero-width space. */
const NAME = "Ünïcødé 日本語 add \u202Etxt.exe\u200B file";
const SHOWN = "Ünïcødé 日本語 add ⟨U+202E⟩txt.exe⟨U+200B⟩ file";

test("oneLine keeps names of every script verbatim and shows invisible characters as tokens", () => {
  assert.equal(oneLine(NAME), SHOWN);
  assert.equal(oneLine("docs/Ünïcødé/日本語.md"), "docs/Ünïcødé/日本語.md");
  assert.equal(oneLine("feature/käse-🧀"), "feature/käse-🧀");
  assert.equal(oneLine("x`](http://evil) *y*"), "x`](http://evil) *y*", "plain text: nothing escaped");
});

test("oneLine makes one line and bounds by grapheme cluster, never inside an emoji, a combining mark or a token", () => {
  assert.equal(oneLine("Edit the guide\n# heading\t*x*"), "Edit the guide # heading *x*");
  assert.equal([...oneLine("é".repeat(300))].length, INLINE_MAX_GRAPHEMES);
  assert.equal(oneLine("e\u0301".repeat(300)), `${"e\u0301".repeat(INLINE_MAX_GRAPHEMES - 1)}…`);
  assert.equal(oneLine("👩‍💻👩‍💻👩‍💻", 2), "👩‍💻…");
  assert.equal(oneLine("ab\u202Ecd", 4), "ab⟨U+202E⟩…");
});

test("inlineSafe: a name in Markdown prose keeps every script and cannot form a link, emphasis, code or HTML", () => {
  assert.equal(inlineSafe(NAME), SHOWN);
  assert.equal(inlineSafe("x`](http://evil)"), "x\\`\\](http://evil)");
  assert.equal(inlineSafe("[click](http://evil)"), "\\[click\\](http://evil)");
  assert.equal(inlineSafe("<img src=x> *b* ~s~ a|b \\"), "\\<img src=x\\> \\*b\\* ~s\\~ a\\|b \\\\");
  assert.equal(inlineSafe("~1 (pending on main)"), "~1 (pending on main)", "a provisional id stays");
  assert.equal(inlineSafe("&amp; R&D"), "\\&amp; R&D", "only an & that starts an entity");
  assert.equal(inlineSafe("pkg/__init__.py"), "pkg/\\_\\_init\\_\\_.py", "no bold");
  assert.equal(inlineSafe("feature_x"), "feature_x", "an underscore inside a word stays");
  assert.equal(inlineSafe("Edit the guide\n# heading"), "Edit the guide # heading", "no line break");
  assert.equal(inlineSafe("日本語_テスト"), "日本語_テスト");
});

test("codeSpan holds any name verbatim: a longer backtick fence, padding where CommonMark needs it", () => {
  assert.equal(codeSpan("write_file"), "`write_file`");
  assert.equal(codeSpan("日本語"), "`日本語`");
  assert.equal(codeSpan("a`b"), "``a`b``");
  assert.equal(codeSpan("`x``"), "``` `x`` ```");
  assert.equal(codeSpan(" x"), "`  x `");
  assert.equal(codeSpan(""), "` `");
  assert.equal(codeSpan("tool\u202E\nname"), "`tool⟨U+202E⟩ name`");
});
