import { SNIPPET_FILENAME } from "./transpile.ts";

const escaped = SNIPPET_FILENAME.replace(/\./g, "\\.");
const STACK_POSITION = new RegExp(`${escaped}:(\\d+):(\\d+)`);

/**
 * First `snippet.ts:LINE:COL` position found in a stack or message (1-based), or {0,0} when none.
 * V8 stack frames and isolated-vm compile errors ("[snippet.ts:3:7]") both use this form.
 */
export function snippetPosition(...texts: Array<string | undefined>): { line: number; column: number } {
  for (const text of texts) {
    const match = text ? STACK_POSITION.exec(text) : null;
    if (match) return { line: Number(match[1]), column: Number(match[2]) };
  }
  return { line: 0, column: 0 };
}
