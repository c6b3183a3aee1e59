/**
 * Plain tables for people, in linear time: the same characters and layout as cli-table3 with no
 * colours (`new Table({ head, style: { head: [], border: [] } })`: box-drawing borders, one space of
 * padding each side, a rule between every row), which the CLI used before. cli-table3 lays out
 * cells in quadratic time (its span-conflict check scans every earlier row) and does ~60 µs of work
 * per cell: 5,000 actions took 7 s to print; this takes milliseconds. Cell widths are measured
 * with cli-table3's own `strlen` (string-width: wide CJK and emoji count 2), skipped for the
 * common printable-ASCII cell, whose width is its length.
 */
/// <reference path="./cli-table3-utils.d.ts" />
import { strlen } from "cli-table3/src/utils.js";

/** Printable ASCII only: the width is the length. */
const PLAIN_ASCII = /^[\x20-\x7e]*$/;

function widthOf(text: string): number {
  return PLAIN_ASCII.test(text) ? text.length : strlen(text);
}

/**
 * Renders `head` and `rows` as a bordered table. Every cell must be one line (no "\n") and already
 * made terminal-safe by the caller; rows shorter than `head` are padded with empty cells.
 * @returns the table without a trailing newline.
 */
export function renderTable(head: string[], rows: string[][]): string {
  const widths = head.map(widthOf);
  const cellWidths = rows.map((row) =>
    head.map((_, i) => {
      const w = widthOf(row[i] ?? "");
      if (w > widths[i]!) widths[i] = w;
      return w;
    }),
  );
  const rule = (left: string, mid: string, right: string) =>
    `${left}${widths.map((w) => "─".repeat(w + 2)).join(mid)}${right}`;
  const line = (cells: string[], cellWidth: (i: number) => number) =>
    `│${head.map((_, i) => ` ${cells[i] ?? ""}${" ".repeat(widths[i]! - cellWidth(i))} `).join("│")}│`;
  const between = rule("├", "┼", "┤");
  const out: string[] = [rule("┌", "┬", "┐"), line(head, (i) => widthOf(head[i]!))];
  rows.forEach((row, r) => {
    out.push(
      between,
      line(row, (i) => cellWidths[r]![i]!),
    );
  });
  out.push(rule("└", "┴", "┘"));
  return out.join("\n");
}
