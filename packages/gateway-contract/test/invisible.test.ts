import assert from "node:assert/strict";
import { test } from "node:test";
import {
  codePointLabel,
  findInvisible,
  graphemes,
  hasInvisible,
  MAX_CLUSTER_CODE_POINTS,
  showInvisible,
  splitInvisible,
  visibleLine,
} from "../src/invisible.ts";

/** [what, input, shown] */
const cases: Array<[string, string, string]> = [
  ["a right-to-left override in a file name", "invoice\u202Etxt.exe", "invoice⟨U+202E⟩txt.exe"],
  [
    "every bidi embedding and override",
    "\u202A\u202B\u202C\u202D\u202E",
    "⟨U+202A⟩⟨U+202B⟩⟨U+202C⟩⟨U+202D⟩⟨U+202E⟩",
  ],
  ["every bidi isolate", "a\u2066b\u2067c\u2068d\u2069", "a⟨U+2066⟩b⟨U+2067⟩c⟨U+2068⟩d⟨U+2069⟩"],
  ["direction marks", "\u200E\u200F\u061C", "⟨U+200E⟩⟨U+200F⟩⟨U+061C⟩"],
  ["zero-width space, non-joiner and joiner", "pay\u200Bpal\u200C\u200D", "pay⟨U+200B⟩pal⟨U+200C⟩⟨U+200D⟩"],
  [
    "word joiner and invisible operators",
    "\u2060\u2061\u2062\u2063\u2064",
    "⟨U+2060⟩⟨U+2061⟩⟨U+2062⟩⟨U+2063⟩⟨U+2064⟩",
  ],
  ["a byte-order mark", "\uFEFFkey", "⟨U+FEFF⟩key"],
  ["a soft hyphen", "ad\u00ADmin", "ad⟨U+00AD⟩min"],
  ["other format characters (Cf)", "\u0600\u180E\u206A\uFFF9", "⟨U+0600⟩⟨U+180E⟩⟨U+206A⟩⟨U+FFF9⟩"],
  [
    "tag characters (astral Cf) smuggling ASCII",
    "ok\u{E0001}\u{E0068}\u{E0069}",
    "ok⟨U+E0001⟩⟨U+E0068⟩⟨U+E0069⟩",
  ],
  [
    "C0 controls other than newline and tab",
    "a\u0000b\u001B[2Kc\rd\u0007",
    "a⟨U+0000⟩b⟨U+001B⟩[2Kc⟨U+000D⟩d⟨U+0007⟩",
  ],
  ["DEL and C1 controls", "\u007F\u0085\u009B", "⟨U+007F⟩⟨U+0085⟩⟨U+009B⟩"],
  ["line and paragraph separators", "a\u2028b\u2029", "a⟨U+2028⟩b⟨U+2029⟩"],
  ["blank letters", "\u3164\uFFA0\u115F\u1160\u034F", "⟨U+3164⟩⟨U+FFA0⟩⟨U+115F⟩⟨U+1160⟩⟨U+034F⟩"],
  ["variation selectors carrying hidden data", "x\uFE00\u{E0100}\u{E01EF}", "x⟨U+FE00⟩⟨U+E0100⟩⟨U+E01EF⟩"],
  ["a repeated emoji presentation selector", "\u2764\uFE0F\uFE0F", "\u2764\uFE0F⟨U+FE0F⟩"],
  ["a presentation selector that follows nothing visible", "\uFE0Fa \uFE0E", "⟨U+FE0F⟩a ⟨U+FE0E⟩"],
  ["a lone surrogate", "a\uD800b", "a⟨U+D800⟩b"],
  ["newlines and tabs stay", "line one\n\tline two", "line one\n\tline two"],
  ["ordinary non-ASCII text stays", "Grüße, 日本語, עברית, العربية", "Grüße, 日本語, עברית, العربية"],
  [
    "emoji with a presentation selector and ZWJ-free sequences stay",
    "\u2764\uFE0F 👍🏽 🇩🇪",
    "\u2764\uFE0F 👍🏽 🇩🇪",
  ],
  [
    "emoji ZWJ sequences stay (the joiner is part of the one emoji)",
    "👨‍👩‍👧 👩🏽‍💻 ❤️‍🔥",
    "👨‍👩‍👧 👩🏽‍💻 ❤️‍🔥",
  ],
  ["a joiner that joins no emoji", "a\u200Db 👍\u200D x\u200D👍", "a⟨U+200D⟩b 👍⟨U+200D⟩ x⟨U+200D⟩👍"],
  ["the empty string", "", ""],
];

for (const [what, input, shown] of cases) {
  test(`showInvisible: ${what}`, () => {
    assert.equal(showInvisible(input), shown);
    assert.equal(showInvisible(shown), shown, "idempotent: tokens are plain text");
    assert.equal(hasInvisible(input), input !== shown);
  });
}

test("findInvisible gives each character's UTF-16 index, code point, token and name", () => {
  assert.deepEqual(findInvisible("invoice\u202Etxt\u{E0041}.exe\u200B"), [
    { index: 7, codePoint: 0x202e, token: "⟨U+202E⟩", name: "RIGHT-TO-LEFT OVERRIDE" },
    { index: 11, codePoint: 0xe0041, token: "⟨U+E0041⟩", name: "TAG CHARACTER" },
    { index: 17, codePoint: 0x200b, token: "⟨U+200B⟩", name: "ZERO WIDTH SPACE" },
  ]);
});

test("splitInvisible cuts text into runs and characters whose tokens join to the shown form", () => {
  const parts = splitInvisible("\u202Ea\u{E0041}bc\u200B");
  assert.deepEqual(
    parts.map((p) => (typeof p === "string" ? p : p.codePoint)),
    [0x202e, "a", 0xe0041, "bc", 0x200b],
  );
  assert.equal(
    parts.map((p) => (typeof p === "string" ? p : p.token)).join(""),
    "⟨U+202E⟩a⟨U+E0041⟩bc⟨U+200B⟩",
  );
  assert.deepEqual(splitInvisible("plain"), ["plain"]);
  assert.deepEqual(splitInvisible(""), []);
});

test("codePointLabel pads to four upper-case hex digits", () => {
  assert.equal(codePointLabel(0x1b), "U+001B");
  assert.equal(codePointLabel(0x202e), "U+202E");
  assert.equal(codePointLabel(0xe0100), "U+E0100");
});

test("every Cf character of the Basic Multilingual Plane is found", () => {
  const missed: string[] = [];
  for (let cp = 0; cp <= 0xffff; cp++) {
    const char = String.fromCharCode(cp);
    if (/\p{Cf}/u.test(char) && !hasInvisible(char)) missed.push(codePointLabel(cp));
  }
  assert.deepEqual(missed, []);
});

/** The acceptance title of issue 33: two scripts, an RLO and a zero-width space. */
const TITLE = "Ünïcødé 日本語 add \u202Etxt.exe\u200B file";

test("visibleLine keeps every script verbatim and shows an RLO and a zero-width space as tokens", () => {
  assert.equal(visibleLine(TITLE), "Ünïcødé 日本語 add ⟨U+202E⟩txt.exe⟨U+200B⟩ file");
  for (const text of ["Grüße, 日本語, עברית, العربية, Ελληνικά, हिन्दी, 한국어", "👨‍👩‍👧 🇩🇪 ❤️"]) {
    assert.equal(visibleLine(text), text);
  }
});

test("visibleLine makes one line: line breaks, tabs and space runs are one space; other spaces of every script stay", () => {
  assert.equal(visibleLine("a\r\n\tb  c\u2028d"), "a b c d");
  assert.equal(visibleLine("日本\u3000語 a\u00A0b"), "日本\u3000語 a\u00A0b");
  assert.equal(visibleLine("a\uFEFFb"), "a⟨U+FEFF⟩b", "a zero-width no-break space is not a space");
});

test("visibleLine bounds by grapheme cluster: a ZWJ emoji, a flag and a letter with combining marks count one each", () => {
  assert.equal(graphemes("👨‍👩‍👧").length, 1);
  assert.equal(visibleLine("👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧", 3), "👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧", "three family emoji fit in 3");
  assert.equal(visibleLine("👨‍👩‍👧👨‍👩‍👧👨‍👩‍👧x", 3), "👨‍👩‍👧👨‍👩‍👧…", "never cut inside the family");
  assert.equal(visibleLine("🇩🇪🇯🇵🇫🇷", 2), "🇩🇪…", "a flag is not cut into regional indicators");
  const decomposed = "e\u0301\u0323".repeat(5);
  assert.equal(visibleLine(decomposed, 5), decomposed, "five letters with two combining marks each fit in 5");
  assert.equal(visibleLine(decomposed, 3), "e\u0301\u0323e\u0301\u0323…", "a cut keeps each letter's marks");
  assert.equal(visibleLine("日本語のタイトル", 4), "日本語…");
  assert.equal(visibleLine("short", 5), "short");
});

test("visibleLine counts an invisible character as one and never cuts inside its token; bounded again it is unchanged", () => {
  const cut = visibleLine("ab\u202Ecd\u200Bef", 5);
  assert.equal(cut, "ab⟨U+202E⟩c…");
  assert.equal(visibleLine(cut, 5), cut, "idempotent when bounded");
  assert.equal(visibleLine(visibleLine(TITLE, 12), 12), visibleLine(TITLE, 12));
});

test("visibleLine cuts a cluster stacked with hundreds of combining marks", () => {
  const zalgo = `a${"\u0301".repeat(500)}b`;
  const shown = visibleLine(zalgo, 10);
  assert.equal(shown, `a${"\u0301".repeat(MAX_CLUSTER_CODE_POINTS - 1)}…b`);
});
