/**
 * Bounded approver descriptions (docs/architecture.md "The approval contract": exact, bounded, untrusted text
 * fenced). A description is trusted lines the gatekeeper wrote plus untrusted blocks (file content,
 * a diff, tool arguments), each fenced by `fenceUntrusted` and cut to a byte budget. When any block
 * was cut, `descriptionIsComplete` is false and a warning line follows the headline.
 *
 * Budgets are UTF-8 bytes: each block has its own `maxBytes`, and `totalBytes` (optional) bounds
 * the whole description; the untrusted blocks then share what the trusted text leaves.
 *
 * When a block holds characters that do not show as themselves (direction controls, zero-width and
 * other format or control characters), a trusted warning after the headline names each value that
 * holds them and which (`invisibleNote`): approvers' screens show them as `⟨U+202E⟩` marks.
 */
import { fenceUntrusted } from "./fence.ts";
import { invisibleNote, invisibleValues } from "./invisible-note.ts";

/** One untrusted block: a label line (trusted) then the fenced text. */
export interface UntrustedBlock {
  /** Trusted line shown before the block, e.g. "Diff (untrusted, exactly as staged):". */
  label: string;
  /** The untrusted text, shown verbatim inside a fence. */
  text: string;
  /** Info string of the fence ("text", "json", "diff"); default "text". */
  lang?: string;
  /** Byte budget of this block's text (UTF-8 bytes, before fencing). */
  maxBytes: number;
  /**
   * How the hidden-characters warning names this block, e.g. "Commit message"; default: the label
   * up to its first "(" or ":". JSON blocks are named value by value (`Arguments \`path\``).
   */
  name?: string;
}

/** Input of `buildDescription`. */
export interface DescriptionInput {
  /** One trusted line starting the description, e.g. "Commit 2 files to `main`.". */
  headline: string;
  /** Trusted lines after the headline (may be empty). Names in them go through `inlineSafe` (inline-text.ts). */
  details?: string[];
  blocks: UntrustedBlock[];
  /** Upper bound of the whole description in UTF-8 bytes; default: no bound beyond the blocks'. */
  totalBytes?: number;
  /** Line shown after the headline when a block was cut. */
  cutWarning?: string;
}

/** A bounded description. */
export interface BoundedDescription {
  description: string;
  /** False when any untrusted block was cut to fit its budget. */
  descriptionIsComplete: boolean;
}

/** The default warning shown when a block was cut. */
export const CUT_WARNING =
  "**Warning: this description was cut to fit its size budget; the full content is larger.**";

function render(input: DescriptionInput, budgets: number[], hidden: string[]): BoundedDescription {
  const fenced = input.blocks.map((b, i) => fenceUntrusted(b.text, budgets[i]!, b.lang ?? "text"));
  const complete = fenced.every((f) => f.complete);
  const lines = [
    input.headline,
    "",
    ...(complete ? [] : [input.cutWarning ?? CUT_WARNING, ""]),
    ...(hidden.length > 0 ? [...hidden, ""] : []),
    ...(input.details && input.details.length > 0 ? [...input.details, ""] : []),
  ];
  input.blocks.forEach((b, i) => {
    if (i > 0) lines.push("");
    lines.push(b.label, "", fenced[i]!.markdown);
  });
  if (input.blocks.length === 0) lines.splice(lines.length - 1, 1);
  return { description: lines.join("\n"), descriptionIsComplete: complete };
}

/**
 * Builds the description (format: headline, blank, [cut warning, blank], [hidden-characters
 * warning and its list, blank], details, blank, then each block as label, blank, fence, separated
 * by blank lines). The hidden-characters warning looks at each block's whole text, also what a
 * budget cuts off.
 * @throws RangeError when `totalBytes` cannot hold even the trusted text with empty blocks.
 */
export function buildDescription(input: DescriptionInput): BoundedDescription {
  const hidden = invisibleNote(input.blocks.flatMap((b) => invisibleValues(b)));
  let budgets = input.blocks.map((b) => Math.max(0, b.maxBytes));
  let out = render(input, budgets, hidden);
  const total = input.totalBytes;
  if (total === undefined) return out;
  // Shrink the blocks until the whole fits: each round removes the overflow (plus fence growth)
  // from the largest budgets. Terminates: budgets only decrease and reach 0.
  for (let round = 0; round < 64; round++) {
    const over = Buffer.byteLength(out.description, "utf8") - total;
    if (over <= 0) return out;
    const largest = Math.max(...budgets, 0);
    if (largest === 0) break;
    const cut = Math.max(1, Math.ceil(over / budgets.filter((b) => b > 0).length) + 8);
    budgets = budgets.map((b) => Math.max(0, b - cut));
    out = render(input, budgets, hidden);
  }
  if (Buffer.byteLength(out.description, "utf8") <= total) return out;
  throw new RangeError(
    `totalBytes ${total} cannot hold the trusted text of this description; raise totalBytes or shorten the headline and labels`,
  );
}
