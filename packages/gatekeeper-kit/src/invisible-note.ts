/**
 * The warning a description carries when untrusted values hold characters that do not show as
 * themselves (direction controls, zero-width and other format characters, control characters; the
 * set is `findInvisible` of @gatehouse/gateway-contract). Approvers' screens show those characters
 * as `⟨U+202E⟩` tokens; this note says, in the description's trusted text, which value holds which,
 * so an approver is told before reading the fenced text.
 *
 * Values are named by the block (its `name`, else its label up to the first "(" or ":") and, for
 * JSON blocks, the path of the string or key inside the JSON (`Arguments \`edits[0].path\``).
 */
import { codePointLabel, findInvisible, invisibleName } from "@gatehouse/gateway-contract/invisible";
import { codeSpan } from "./inline-text.ts";

/** One value that holds invisible characters. */
export interface InvisibleValue {
  /** Where it is, e.g. "Arguments `path`" or "Commit message" (already inline-safe). */
  where: string;
  /** Its distinct invisible code points, in order of first appearance. */
  codePoints: number[];
}

/** At most this many values are listed (then "… and N more values"). */
export const NOTE_MAX_VALUES = 8;
/** At most this many distinct code points are named per value (then "and N more"). */
export const NOTE_MAX_CODE_POINTS = 6;
/** A JSON path in the note is cut to this many grapheme clusters. */
const PATH_MAX_CHARS = 80;

/** The name of a block in the note: its `name`, else its label cut at the first "(" or ":". */
export function blockName(block: { label: string; name?: string }): string {
  const raw = block.name ?? block.label.replace(/\s*[(:].*$/s, "");
  return raw.trim() || "A value";
}

function distinct(text: string): number[] {
  return [...new Set(findInvisible(text).map((c) => c.codePoint))];
}

function walk(value: unknown, path: string, out: Array<{ path: string; codePoints: number[] }>): void {
  if (typeof value === "string") {
    const cps = distinct(value);
    if (cps.length > 0) out.push({ path, codePoints: cps });
  } else if (Array.isArray(value)) {
    value.forEach((v, i) => {
      walk(v, `${path}[${i}]`, out);
    });
  } else if (value !== null && typeof value === "object") {
    for (const [key, v] of Object.entries(value)) {
      const at = path ? `${path}.${key}` : key;
      const inKey = distinct(key);
      if (inKey.length > 0) out.push({ path: `${at} (the key)`, codePoints: inKey });
      walk(v, at, out);
    }
  }
}

/**
 * The values of one untrusted block that hold invisible characters (empty when none). A block with
 * `lang` "json" whose text parses is searched value by value; any other block counts as one value.
 */
export function invisibleValues(block: {
  label: string;
  name?: string;
  text: string;
  lang?: string;
}): InvisibleValue[] {
  const name = blockName(block);
  if (block.lang === "json") {
    let parsed: unknown;
    let ok = true;
    try {
      parsed = JSON.parse(block.text);
    } catch {
      ok = false;
    }
    if (ok) {
      const found: Array<{ path: string; codePoints: number[] }> = [];
      walk(parsed, "", found);
      return found.map((f) => ({
        where: f.path ? `${name} ${codeSpan(f.path, PATH_MAX_CHARS)}` : name,
        codePoints: f.codePoints,
      }));
    }
  }
  const cps = distinct(block.text);
  return cps.length > 0 ? [{ where: name, codePoints: cps }] : [];
}

/**
 * Trusted Markdown lines warning about `values` (empty for none): a bold warning line, then one
 * list item per value naming its code points, e.g.
 * "- Arguments `path` contains invisible or direction-control characters: U+202E RIGHT-TO-LEFT OVERRIDE".
 * Bounded: at most {@link NOTE_MAX_VALUES} values × {@link NOTE_MAX_CODE_POINTS} code points.
 */
export function invisibleNote(values: InvisibleValue[]): string[] {
  if (values.length === 0) return [];
  const items = values.slice(0, NOTE_MAX_VALUES).map((v) => {
    const named = v.codePoints
      .slice(0, NOTE_MAX_CODE_POINTS)
      .map((cp) => `${codePointLabel(cp)} ${invisibleName(cp)}`);
    const more = v.codePoints.length - named.length;
    return `- ⚠ ${v.where} contains invisible or direction-control characters: ${named.join(", ")}${more > 0 ? `, and ${more} more` : ""}`;
  });
  const moreValues = values.length - items.length;
  if (moreValues > 0) items.push(`- … and ${moreValues} more value(s)`);
  return [
    "**⚠ Hidden characters: some values below contain characters that do not show as themselves and can make text read differently from the bytes that will apply. They are shown as ⟨U+…⟩ marks.**",
    "",
    ...items,
  ];
}
