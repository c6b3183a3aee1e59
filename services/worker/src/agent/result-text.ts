/**
 * The text the built-in agent's model reads after executeCode: the MCP surface's result text
 * (`executeResultText`), with the advice that only fits an MCP client replaced. The built-in tool has
 * no `timeout_seconds` (a snippet gets a fixed wall time), no `wait_for_decisions` (the turn itself
 * waits for people and then shows the model each write's outcome) and no structured content.
 */
import { executeResultText } from "@gatehouse/agent-mcp";
import type { ExecuteResult } from "@gatehouse/proto";

/** Wall time of one snippet the built-in agent runs, ms. */
export const SNIPPET_WALL_MS = 30_000;

/** `executeResultText` for the built-in agent: the same facts, the advice it can follow. */
export function builtinResultText(r: ExecuteResult): string {
  return executeResultText(r)
    .replace(
      /do less per execution, or pass execute_code a larger timeout_seconds \(at most \d+\)/,
      `do less per execution (a snippet may run at most ${SNIPPET_WALL_MS / 1000} s)`,
    )
    .replace(
      /This turn \(turn_id [^)]*\) is suspended until a person decides the awaited writes\. Call wait_for_decisions with turn_id "[^"]*" to learn each one's outcome and result; until then, do not repeat those writes\./,
      "This turn now waits until people decide the awaited writes; you will then see each one's outcome and result. Do not repeat those writes.",
    )
    .replace(/; all in structuredContent\.observed\)/, ")");
}
