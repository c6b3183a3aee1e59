/**
 * Names and one-line texts a gatekeeper writes into titles, summaries and the trusted lines of a
 * description (docs/architecture.md "The approval contract": what a person reads is exactly what applies).
 *
 * Every printable character of every script stays as it is (`Ünïcødé`, `日本語`, emoji); what a
 * person could not see becomes visible: each invisible or direction-control character is its
 * `⟨U+202E⟩` token (`findInvisible` of @gatehouse/gateway-contract), so `add \u202Etxt.exe` reads
 * `add ⟨U+202E⟩txt.exe` in the inbox, the CLI tables and notifications alike. Line breaks and tabs
 * become spaces (one line). Lengths are user-perceived characters (grapheme clusters), never bytes.
 *
 * Three shapes, by where the text lands:
 * - `oneLine`: plain text — titles, summaries, field values (no escaping: these are shown as text);
 * - `inlineSafe`: inside Markdown prose — a description's headline and detail lines; Markdown
 *   punctuation is backslash-escaped so a name cannot form a link, emphasis or HTML;
 * - `codeSpan`: a Markdown code span holding the name verbatim (a backtick fence longer than any
 *   backtick run inside).
 */
import { visibleLine } from "@gatehouse/gateway-contract/invisible";

/** Default bound of a name outside a fence, in grapheme clusters. */
export const INLINE_MAX_GRAPHEMES = 128;

/**
 * `text` as one plain-text line for a title, summary or field value: printable characters of
 * every script kept, invisible characters as `⟨U+XXXX⟩` tokens, line breaks and tabs as spaces,
 * at most `maxGraphemes` grapheme clusters (default 128; the last one "…" when cut, never inside a
 * cluster or a token). Idempotent. Not for Markdown prose (see `inlineSafe`).
 */
export function oneLine(text: string, maxGraphemes = INLINE_MAX_GRAPHEMES): string {
  return visibleLine(text, maxGraphemes);
}

/**
 * ASCII punctuation that can start Markdown (CommonMark + GFM) or HTML inline: backslash, code,
 * emphasis, links and images, raw HTML and autolinks, table cells, an `&` that would start an
 * entity (`&amp;`, `&#42;`), and a `~` after a non-space (only such a `~` can close a strikethrough,
 * so provisional ids like `~1` stay as they are).
 */
const MARKDOWN_PUNCTUATION = /[\\`*[\]<>|]|&(?=#?[A-Za-z0-9]+;)|(?<=\S)~/g;
/** An underscore between two letters or digits cannot open or close emphasis (`feature_x` stays). */
const LONE_UNDERSCORE = /(?<![\p{L}\p{N}])_|_(?![\p{L}\p{N}])/gu;

/**
 * A name (tool, file, branch, table) for a description's Markdown prose, outside a fence: as
 * `oneLine` (every script kept, invisible characters as tokens, one line, at most `maxGraphemes`
 * grapheme clusters, default 128), then Markdown punctuation backslash-escaped (`\\ \` * [ ] < >
 * |`, `&` before an entity name, `~` after a non-space, `_` unless between letters or digits), so
 * it renders as the text itself and cannot form a link, emphasis, code or HTML. Renderers that do
 * not read Markdown show the backslashes: for plain-text titles use `oneLine`.
 */
export function inlineSafe(text: string, maxGraphemes = INLINE_MAX_GRAPHEMES): string {
  return oneLine(text, maxGraphemes).replace(MARKDOWN_PUNCTUATION, "\\$&").replace(LONE_UNDERSCORE, "\\_");
}

/**
 * A Markdown code span showing `text` verbatim as `oneLine` shows it (every script kept,
 * invisible characters as tokens, one line, at most `maxGraphemes` grapheme clusters, default
 * 128): fenced by one backtick more than its longest backtick run, with a space inside each fence
 * when it starts or ends with a backtick or a space (CommonMark strips exactly one); "` `" for "".
 */
export function codeSpan(text: string, maxGraphemes = INLINE_MAX_GRAPHEMES): string {
  const shown = oneLine(text, maxGraphemes);
  const longest = Math.max(0, ...(shown.match(/`+/g) ?? []).map((run) => run.length));
  const fence = "`".repeat(longest + 1);
  if (shown === "") return "` `";
  const pad = /^[` ]|[` ]$/.test(shown) && shown.trim() !== "" ? " " : "";
  return `${fence}${pad}${shown}${pad}${fence}`;
}
