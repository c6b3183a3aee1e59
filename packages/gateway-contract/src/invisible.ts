/**
 * Characters that do not show as themselves, made visible for approvers: what a person reads must
 * be the text that will apply. A direction control such as U+202E RIGHT-TO-LEFT OVERRIDE makes
 * `invoice\u202Etxt.exe` display as `invoiceexe.txt`; a zero-width space makes two different file
 * names look alike. Every place a person reads agent- or gatekeeper-supplied text (the web app, CLI
 * tables) shows each such character as a token `⟨U+202E⟩` instead; machine output (`--json`, API
 * bodies) keeps the exact bytes.
 *
 * Shown as tokens ({@link isInvisible}):
 * - C0 and C1 control characters except newline and tab (U+0000–U+0008, U+000B–U+001F, U+007F–U+009F);
 * - every Unicode format character (general category Cf): the bidirectional embeddings, overrides
 *   and isolates U+202A–U+202E and U+2066–U+2069, the marks U+200E, U+200F and U+061C, zero-width
 *   U+200B–U+200D, U+2060–U+2064, U+FEFF, the soft hyphen U+00AD, tag characters U+E0001–U+E007F, …;
 * - the line and paragraph separators U+2028 and U+2029;
 * - blank letters that render as nothing: U+034F, U+115F, U+1160, U+3164, U+FFA0, U+180B–U+180F;
 * - variation selectors (U+FE00–U+FE0F, U+E0100–U+E01EF), which can carry hidden data — except one
 *   emoji/text presentation selector (U+FE0E, U+FE0F) right after a visible character, as in "❤️";
 * - the zero-width joiner U+200D, except inside an emoji ZWJ sequence (between two pictographic
 *   characters, as in "👩‍💻"), where it is part of the one emoji a person sees;
 * - lone UTF-16 surrogates (they show as "�" and are not the bytes that apply).
 *
 * Pure and dependency-free, so the browser bundle, the CLI and the gatekeeper kit share it.
 */

/** One character of a text that does not show as itself. */
export interface InvisibleChar {
  /** UTF-16 offset of the character in the text. */
  index: number;
  /** Its code point (a lone surrogate's own value for a lone surrogate). */
  codePoint: number;
  /** How it is shown: `⟨U+202E⟩` (at least four upper-case hex digits). */
  token: string;
  /** A readable name, e.g. "RIGHT-TO-LEFT OVERRIDE", or the kind for unnamed ones ("FORMAT CHARACTER"). */
  name: string;
}

const NAMES: Record<number, string> = {
  0: "NULL",
  7: "BELL",
  8: "BACKSPACE",
  11: "LINE TABULATION",
  12: "FORM FEED",
  13: "CARRIAGE RETURN",
  27: "ESCAPE",
  127: "DELETE",
  133: "NEXT LINE",
  155: "CONTROL SEQUENCE INTRODUCER",
  173: "SOFT HYPHEN",
  847: "COMBINING GRAPHEME JOINER",
  1564: "ARABIC LETTER MARK",
  4447: "HANGUL CHOSEONG FILLER",
  4448: "HANGUL JUNGSEONG FILLER",
  6158: "MONGOLIAN VOWEL SEPARATOR",
  8203: "ZERO WIDTH SPACE",
  8204: "ZERO WIDTH NON-JOINER",
  8205: "ZERO WIDTH JOINER",
  8206: "LEFT-TO-RIGHT MARK",
  8207: "RIGHT-TO-LEFT MARK",
  8232: "LINE SEPARATOR",
  8233: "PARAGRAPH SEPARATOR",
  8234: "LEFT-TO-RIGHT EMBEDDING",
  8235: "RIGHT-TO-LEFT EMBEDDING",
  8236: "POP DIRECTIONAL FORMATTING",
  8237: "LEFT-TO-RIGHT OVERRIDE",
  8238: "RIGHT-TO-LEFT OVERRIDE",
  8288: "WORD JOINER",
  8289: "FUNCTION APPLICATION",
  8290: "INVISIBLE TIMES",
  8291: "INVISIBLE SEPARATOR",
  8292: "INVISIBLE PLUS",
  8294: "LEFT-TO-RIGHT ISOLATE",
  8295: "RIGHT-TO-LEFT ISOLATE",
  8296: "FIRST STRONG ISOLATE",
  8297: "POP DIRECTIONAL ISOLATE",
  12644: "HANGUL FILLER",
  65279: "ZERO WIDTH NO-BREAK SPACE",
  65440: "HALFWIDTH HANGUL FILLER",
};

/** Characters shown as tokens wherever they stand (variation selectors are handled apart). */
const ALWAYS =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u115f\u1160\u2028\u2029\u3164\uffa0]|\u034f|[\u180b-\u180f]|\p{Cf}|\p{Cs}/u;
const VARIATION = /[\ufe00-\ufe0f\u{e0100}-\u{e01ef}]/u;
const PICTOGRAPHIC = /\p{Extended_Pictographic}/u;
/** What may stand between a pictograph and the ZWJ of an emoji sequence: skin tones, VS16. */
const EMOJI_TAIL = /[\u{1f3fb}-\u{1f3ff}\ufe0f]/u;
/**
 * Any character of ALWAYS or VARIATION: a text without one has nothing to show, which one regex
 * scan decides (a CLI table of 5,000 rows is a megabyte; walking it character by character took
 * 0.4 s).
 */
const ANY_CANDIDATE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\u115f\u1160\u2028\u2029\u3164\uffa0]|\u034f|[\u180b-\u180f]|[\ufe00-\ufe0f]|[\u{e0100}-\u{e01ef}]|\p{Cf}|\p{Cs}/u;

/** "U+202E" for a code point (at least four upper-case hex digits). */
export function codePointLabel(codePoint: number): string {
  return `U+${codePoint.toString(16).toUpperCase().padStart(4, "0")}`;
}

/** A readable name of a code point this module makes visible (its Unicode name, or its kind). */
export function invisibleName(codePoint: number): string {
  const named = NAMES[codePoint];
  if (named) return named;
  if (codePoint <= 0x9f) return "CONTROL CHARACTER";
  if (codePoint >= 0xd800 && codePoint <= 0xdfff) return "LONE SURROGATE";
  if ((codePoint >= 0xfe00 && codePoint <= 0xfe0f) || (codePoint >= 0xe0100 && codePoint <= 0xe01ef)) {
    return "VARIATION SELECTOR";
  }
  if (codePoint >= 0xe0000 && codePoint <= 0xe007f) return "TAG CHARACTER";
  if (codePoint >= 0x180b && codePoint <= 0x180f) return "MONGOLIAN FREE VARIATION SELECTOR";
  return "FORMAT CHARACTER";
}

/**
 * Every character of `text` that does not show as itself, in text order (see the module comment
 * for which). Empty for ordinary text, including newlines, tabs and emoji.
 */
export function findInvisible(text: string): InvisibleChar[] {
  const found: InvisibleChar[] = [];
  if (!ANY_CANDIDATE.test(text)) return found;
  let index = 0;
  let previousVisible = false;
  // Whether the text so far ends in a pictograph (maybe with skin tone or VS16): a ZWJ there that
  // is followed by another pictograph joins an emoji.
  let inEmoji = false;
  // for…of walks code points; a lone surrogate comes out as itself.
  for (const char of text) {
    const codePoint = char.codePointAt(0) ?? 0;
    let hidden = ALWAYS.test(char);
    if (hidden && codePoint === 0x200d && inEmoji) {
      const next = text.codePointAt(index + 1);
      hidden = next === undefined || !PICTOGRAPHIC.test(String.fromCodePoint(next));
    }
    if (!hidden && VARIATION.test(char)) {
      hidden = !(previousVisible && (codePoint === 0xfe0e || codePoint === 0xfe0f));
    }
    inEmoji = PICTOGRAPHIC.test(char) || (inEmoji && !hidden && EMOJI_TAIL.test(char));
    if (hidden) {
      found.push({
        index,
        codePoint,
        token: `⟨${codePointLabel(codePoint)}⟩`,
        name: invisibleName(codePoint),
      });
    }
    previousVisible = !hidden && !VARIATION.test(char) && !/\s/u.test(char);
    index += char.length;
  }
  return found;
}

/** Whether `text` holds any character {@link findInvisible} would show as a token. */
export function hasInvisible(text: string): boolean {
  return findInvisible(text).length > 0;
}

/**
 * `text` cut into plain runs and the invisible characters between them, in order; joining the
 * runs and the characters' `token`s gives {@link showInvisible}. For renderers that mark tokens
 * (the web app wraps each in a titled `<span class="invisible-char">`).
 */
export function splitInvisible(text: string): Array<string | InvisibleChar> {
  const parts: Array<string | InvisibleChar> = [];
  let at = 0;
  for (const c of findInvisible(text)) {
    if (c.index > at) parts.push(text.slice(at, c.index));
    parts.push(c);
    at = c.index + (c.codePoint > 0xffff ? 2 : 1);
  }
  if (at < text.length) parts.push(text.slice(at));
  return parts;
}

/**
 * `text` with every invisible character replaced by its token, e.g. `invoice⟨U+202E⟩txt.exe`.
 * Idempotent (tokens are plain visible text). For display only: never store or apply the result.
 */
export function showInvisible(text: string): string {
  return splitInvisible(text)
    .map((p) => (typeof p === "string" ? p : p.token))
    .join("");
}

/** A cluster of more code points than this (a letter under hundreds of combining marks) is cut. */
export const MAX_CLUSTER_CODE_POINTS = 16;

let segmenter: Intl.Segmenter | undefined;

/**
 * The user-perceived characters (extended grapheme clusters, `Intl.Segmenter`) of `text`: "é" as
 * e + U+0301 is one, "👩‍💻" is one, "🇩🇪" is one.
 */
export function graphemes(text: string): string[] {
  segmenter ??= new Intl.Segmenter(undefined, { granularity: "grapheme" });
  return Array.from(segmenter.segment(text), (s) => s.segment);
}

/** A token as {@link showInvisible} writes it: one unit when a shown text is bounded again. */
const TOKEN = /⟨U\+[0-9A-F]{4,6}⟩/u;
/** Line breaks, tabs and spaces: a run of them is one space in a line (other spaces of every script stay). */
const BREAKS = /[\t\n\v\f\r \u2028\u2029]+/gu;

/**
 * The units {@link visibleLine} counts: the grapheme clusters of `text`, each shown (invisible
 * characters as tokens), a token already in `text` counting as one.
 */
function shownClusters(text: string): string[] {
  const out: string[] = [];
  for (const [i, part] of text.split(new RegExp(`(${TOKEN.source})`, "u")).entries()) {
    if (i % 2 === 1) {
      out.push(part);
      continue;
    }
    for (const cluster of graphemes(part)) {
      const points = Array.from(cluster);
      out.push(
        points.length > MAX_CLUSTER_CODE_POINTS
          ? `${showInvisible(points.slice(0, MAX_CLUSTER_CODE_POINTS).join(""))}…`
          : showInvisible(cluster),
      );
    }
  }
  return out;
}

/**
 * `text` as one line a person can read as it is, for titles, summaries and names shown outside a
 * fence: every printable character of every script kept (`Ünïcødé`, `日本語`, emoji, combining
 * marks); each run of line breaks, tabs and spaces one plain space; each invisible character (see
 * the module comment) its `⟨U+202E⟩` token.
 *
 * Bounded by user-perceived characters, not bytes or UTF-16 units: at most `maxGraphemes`
 * grapheme clusters (`Intl.Segmenter`; an invisible character, shown as its token, counts as one),
 * the last one "…" when cut; a cut never splits a cluster or a token. A cluster of more than
 * {@link MAX_CLUSTER_CODE_POINTS} code points (stacked combining marks) keeps that many and "…".
 * Idempotent, also when bounded. For display only: never store it in place of the text that applies.
 */
export function visibleLine(text: string, maxGraphemes = Number.POSITIVE_INFINITY): string {
  const shown = shownClusters(text.replace(BREAKS, " "));
  if (shown.length <= maxGraphemes) return shown.join("");
  return `${shown.slice(0, Math.max(0, maxGraphemes - 1)).join("")}…`;
}
