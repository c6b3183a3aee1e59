/**
 * Approver-facing text for MCP tool calls, built from the STAGED payload (tool name + arguments)
 * and the tool's description as listed by the server, never from what the caller claims.
 * Tool description and arguments are untrusted: each is fenced and bounded (4 KiB / 16 KiB by
 * default); when cut, `descriptionIsComplete` is false and a marker says so.
 */
import { fenceUntrusted } from "./fence.ts";

/** Byte budgets (UTF-8) for the untrusted parts. */
export interface DescriptionBudget {
  toolDescriptionBytes: number;
  argumentsBytes: number;
}

export const DEFAULT_BUDGET: DescriptionBudget = {
  toolDescriptionBytes: 4 * 1024,
  argumentsBytes: 16 * 1024,
};

/** Title and Markdown description of one staged tool call. */
export interface CallDescription {
  title: string;
  description: string;
  descriptionIsComplete: boolean;
}

function safeInline(text: string): string {
  // Tool and server names appear outside fences: keep them to a harmless character set.
  return text.replace(/[^A-Za-z0-9_.\-:/]/g, "?").slice(0, 128);
}

/**
 * Describes a staged call `tool(arguments)` on `serverName`.
 * @param toolDescription the tool's description from tools/list (may be undefined).
 */
export function describeToolCall(
  serverName: string,
  tool: string,
  toolDescription: string | undefined,
  args: unknown,
  budget: DescriptionBudget = DEFAULT_BUDGET,
): CallDescription {
  const desc = fenceUntrusted(
    toolDescription ?? "(the server gives no description)",
    budget.toolDescriptionBytes,
  );
  const argsText = JSON.stringify(args ?? {}, null, 2);
  const argsBlock = fenceUntrusted(argsText, budget.argumentsBytes, "json");
  const complete = desc.complete && argsBlock.complete;
  const lines = [
    `Call MCP tool \`${safeInline(tool)}\` on server \`${safeInline(serverName)}\`.`,
    "",
    ...(complete
      ? []
      : ["**Warning: this description was cut to fit its size budget; the full call is larger.**", ""]),
    "Tool description (untrusted, from the server):",
    "",
    desc.markdown,
    "",
    "Arguments (untrusted, exactly as staged):",
    "",
    argsBlock.markdown,
  ];
  return {
    title: `Call ${safeInline(tool)} on ${safeInline(serverName)}`,
    description: lines.join("\n"),
    descriptionIsComplete: complete,
  };
}

/**
 * Observation text for a read `tool(arguments)` on `serverName` (arguments fenced and bounded).
 * The data read is not copied into the description.
 */
export function describeRead(
  serverName: string,
  tool: string,
  args: unknown,
  budget: DescriptionBudget = DEFAULT_BUDGET,
): { title: string; description: string } {
  const argsBlock = fenceUntrusted(JSON.stringify(args ?? {}, null, 2), budget.argumentsBytes, "json");
  return {
    title: `Read ${safeInline(tool)} on ${safeInline(serverName)}`,
    description: [
      `Read MCP tool \`${safeInline(tool)}\` on server \`${safeInline(serverName)}\`.`,
      "",
      "Arguments (untrusted):",
      "",
      argsBlock.markdown,
    ].join("\n"),
  };
}
