/**
 * Content flags for the review page's "risk first" (ActionDescription.risks, kind "content"): a
 * staged text that holds something an approver must not miss. Two families:
 *
 * - characters that do not show as themselves (direction controls, zero-width and other format or
 *   control characters; the set is `findInvisible` of @gatehouse/gateway-contract);
 * - known-dangerous SQL, wherever it appears in the text (a Markdown file, a script, a comment):
 *   `DROP TABLE|SCHEMA|DATABASE|VIEW|INDEX …`, `TRUNCATE …`, `DELETE FROM t` with no `WHERE` before
 *   the statement ends, `UPDATE t SET …` with no `WHERE`, `ALTER TABLE … DROP`.
 *
 * A pattern scan, not a parser: it flags text for a person to read and never allows anything, so
 * a false positive costs a look and a false negative is no worse than no flag. Statements are cut
 * at `;` or a blank line. The reason quotes the matched statement's start (inline-safe, bounded)
 * and its 1-based line.
 */
import { findInvisible, visibleLine } from "@gatehouse/gateway-contract/invisible";
import type { ActionRisk } from "@gatehouse/proto";

/** One staged text to scan, e.g. `{ name: "content", text: fileBody }`. */
export interface ScannedText {
  /** How the reason names it, e.g. "content" or "commit message". Inline-safe. */
  name: string;
  text: string;
}

/** At most this many content risks per action (the rest are summed up in the last reason). */
export const MAX_CONTENT_RISKS = 5;
const QUOTE_MAX_CHARS = 60;

const DANGEROUS: Array<{ pattern: RegExp; why: string }> = [
  {
    pattern: /\bdrop\s+(?:table|schema|database|view|index|materialized\s+view)\b/i,
    why: "drops a database object",
  },
  { pattern: /\btruncate\s+(?:table\s+)?[\w."]+/i, why: "empties a table" },
  { pattern: /\balter\s+table\s+[\w."]+\s+drop\b/i, why: "drops part of a table" },
];
const DELETE_START = /\bdelete\s+from\s+[\w."]+/i;
const UPDATE_START = /\bupdate\s+[\w."]+\s+set\b/i;

/** The SQL-like statements of a text: pieces cut at `;` or a blank line, with their start offset. */
function statements(text: string): Array<{ body: string; offset: number }> {
  const out: Array<{ body: string; offset: number }> = [];
  const cut = /;|\n[ \t\r]*\n/g;
  let start = 0;
  for (;;) {
    const m = cut.exec(text);
    const end = m ? m.index : text.length;
    const body = text.slice(start, end);
    if (body.trim() !== "") out.push({ body, offset: start });
    if (!m) break;
    start = m.index + m[0].length;
  }
  return out;
}

/** 1-based line of `offset` in `text`. */
function lineAt(text: string, offset: number): number {
  let line = 1;
  for (let i = 0; i < offset; i++) if (text.charCodeAt(i) === 10) line++;
  return line;
}

/** A statement quoted in a reason: one line, invisible characters as tokens, ≤ QUOTE_MAX_CHARS grapheme clusters. */
function quote(statement: string): string {
  return visibleLine(statement, QUOTE_MAX_CHARS).replace(/`/g, "'");
}

/** Why one statement is dangerous, or undefined. */
function dangerIn(body: string): { at: number; why: string } | undefined {
  for (const d of DANGEROUS) {
    const m = d.pattern.exec(body);
    if (m) return { at: m.index, why: d.why };
  }
  const del = DELETE_START.exec(body);
  if (del && !/\bwhere\b/i.test(body.slice(del.index)))
    return { at: del.index, why: "deletes every row (no WHERE)" };
  const upd = UPDATE_START.exec(body);
  if (upd && !/\bwhere\b/i.test(body.slice(upd.index)))
    return { at: upd.index, why: "updates every row (no WHERE)" };
  return undefined;
}

/**
 * The content risks of staged texts, in text order: invisible characters first (one per text),
 * then each dangerous statement. At most MAX_CONTENT_RISKS.
 * @returns `{kind: "content", reason}` entries, e.g. reason
 *   "content line 7: `DROP TABLE customers` drops a database object".
 */
export function contentRisks(texts: ScannedText[]): ActionRisk[] {
  const found: ActionRisk[] = [];
  for (const t of texts) {
    const hidden = [...new Set(findInvisible(t.text).map((c) => c.codePoint))];
    if (hidden.length > 0) {
      const names = hidden.slice(0, 4).map((cp) => `U+${cp.toString(16).toUpperCase().padStart(4, "0")}`);
      found.push({
        kind: "content",
        reason: `${t.name} holds characters that do not show as themselves (${names.join(", ")}${hidden.length > 4 ? ", …" : ""})`,
      });
    }
  }
  for (const t of texts) {
    for (const s of statements(t.text)) {
      const danger = dangerIn(s.body);
      if (!danger) continue;
      found.push({
        kind: "content",
        reason: `${t.name} line ${lineAt(t.text, s.offset + danger.at)}: \`${quote(s.body.slice(danger.at))}\` ${danger.why}`,
      });
    }
  }
  if (found.length <= MAX_CONTENT_RISKS) return found;
  const kept = found.slice(0, MAX_CONTENT_RISKS - 1);
  kept.push({ kind: "content", reason: `and ${found.length - kept.length} more flagged passages` });
  return kept;
}
