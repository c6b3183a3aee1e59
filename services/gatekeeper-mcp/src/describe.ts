/**
 * Approver-facing text for MCP tool calls, built from the STAGED payload (tool name + arguments)
 * and the tool's description as listed by the server, never from what the caller claims.
 * Tool description and arguments are untrusted: each is fenced and bounded (4 KiB / 16 KiB by
 * default); when cut, `descriptionIsComplete` is false and a marker says so. The bounding and
 * fencing are the kit's `buildDescription`; the wording is MCP's.
 */
import {
  buildDescription,
  fenceUntrusted,
  inlineSafe,
  invisibleNote,
  invisibleValues,
} from "@gatehouse/gatekeeper-kit";

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

// Tool and server names appear outside fences: keep them to a harmless character set.
const safeInline = (text: string) => inlineSafe(text);

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
  const built = buildDescription({
    headline: `Call MCP tool \`${safeInline(tool)}\` on server \`${safeInline(serverName)}\`.`,
    cutWarning: "**Warning: this description was cut to fit its size budget; the full call is larger.**",
    blocks: [
      {
        label: "Tool description (untrusted, from the server):",
        text: toolDescription ?? "(the server gives no description)",
        maxBytes: budget.toolDescriptionBytes,
      },
      {
        label: "Arguments (untrusted, exactly as staged):",
        text: JSON.stringify(args ?? {}, null, 2),
        lang: "json",
        maxBytes: budget.argumentsBytes,
      },
    ],
  });
  return { title: `Call ${safeInline(tool)} on ${safeInline(serverName)}`, ...built };
}

/**
 * Observation text for a read `tool(arguments)` on `serverName` (arguments fenced and bounded;
 * arguments holding invisible or direction-control characters are named, as in writes).
 * The data read is not copied into the description.
 */
export function describeRead(
  serverName: string,
  tool: string,
  args: unknown,
  budget: DescriptionBudget = DEFAULT_BUDGET,
): { title: string; description: string } {
  const argsText = JSON.stringify(args ?? {}, null, 2);
  const argsBlock = fenceUntrusted(argsText, budget.argumentsBytes, "json");
  const hidden = invisibleNote(invisibleValues({ label: "Arguments", text: argsText, lang: "json" }));
  return {
    title: `Read ${safeInline(tool)} on ${safeInline(serverName)}`,
    description: [
      `Read MCP tool \`${safeInline(tool)}\` on server \`${safeInline(serverName)}\`.`,
      "",
      ...(hidden.length > 0 ? [...hidden, ""] : []),
      "Arguments (untrusted):",
      "",
      argsBlock.markdown,
    ].join("\n"),
  };
}
