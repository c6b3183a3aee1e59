/**
 * The `.d.ts` an agent sees for one binding, generated from the tools' input JSON Schemas with
 * json-schema-to-typescript. Schemas come from the MCP server and are UNTRUSTED, so before
 * generation they are sanitized:
 * - `tsType` / `tsEnumNames` (json-schema-to-typescript extensions that inject raw TypeScript) are dropped;
 * - `$ref`s that are not local (`#...`) are replaced by "any value", so generation never reads files
 *   or the network; `$id`/`id` are dropped;
 * - `description`/`title` text is cleaned so it cannot close a doc comment (`*\/`).
 * Tool descriptions in method doc comments are cleaned the same way. Doc-comment sanitising and
 * interface assembly come from @gatehouse/gatekeeper-kit; the JSON-Schema part is MCP-specific.
 */
import {
  assembleInterface,
  type DtsMethod,
  indentLines,
  sanitizeDocText,
  uniqueIdent,
} from "@gatehouse/gatekeeper-kit";
import { compile, type JSONSchema } from "json-schema-to-typescript";
import type { ToolClassification } from "./classify.ts";

export { sanitizeDocText };

/** One permitted tool as the d.ts generator needs it. */
export interface DtsTool {
  name: string;
  description?: string | undefined;
  inputSchema: Record<string, unknown>;
  classification: ToolClassification;
}

/** Deep copy of an untrusted JSON Schema with the dangerous parts removed (see module doc). */
export function sanitizeSchema(value: unknown, depth = 0): unknown {
  if (depth > 64) return {};
  if (Array.isArray(value)) return value.map((v) => sanitizeSchema(v, depth + 1));
  if (value === null || typeof value !== "object") return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value as Record<string, unknown>)) {
    if (k === "tsType" || k === "tsEnumNames" || k === "$id" || k === "id" || k === "$schema") continue;
    if (k === "$ref" && (typeof v !== "string" || !v.startsWith("#"))) continue;
    if ((k === "description" || k === "title") && typeof v === "string") {
      out[k] = sanitizeDocText(v);
      continue;
    }
    out[k] = sanitizeSchema(v, depth + 1);
  }
  return out;
}

/** Shared result types; interfaces (not type aliases) so several bindings' d.ts can be concatenated. */
export const COMMON_DTS = `/** One content block of an MCP tool result (MCP spec, "Tools" > "Tool result"). */
interface McpContent {
  type: string;
  text?: string;
  data?: string;
  mimeType?: string;
  uri?: string;
  resource?: unknown;
  annotations?: unknown;
}
/** The result of an MCP tools/call. */
interface McpCallToolResult {
  content: McpContent[];
  structuredContent?: { [key: string]: unknown };
  isError?: boolean;
}
/** Returned by a write: the action waits for a person's approval. */
interface McpPendingAction {
  status: "pending";
  actionId: number;
}
/** Options of a write. */
interface McpActionOptions {
  /** Action ids from earlier pending handles of this binding (this session) that this write needs. */
  dependsOn?: number[];
}
/** The state of an action, from getActionResult. */
interface McpActionResult {
  status: "pending" | "applied" | "rejected" | "failed";
  reason?: string;
  result?: McpCallToolResult;
}
`;

/**
 * Generates the declaration text for `binding` (an upper-case identifier) exposing `tools`.
 * The output declares `interface <binding>` plus `namespace <binding>_Args`, and compiles with tsc.
 */
export async function generateBindingDts(
  binding: string,
  serverName: string,
  tools: DtsTool[],
): Promise<string> {
  const used = new Set<string>();
  const argNamespaces: string[] = [];
  const methods: DtsMethod[] = [];
  for (const tool of [...tools].sort((a, b) => a.name.localeCompare(b.name))) {
    const ns = uniqueIdent(tool.name, used);
    const schema = sanitizeSchema(tool.inputSchema) as Record<string, unknown>;
    delete schema.title;
    if (schema.type === undefined) schema.type = "object";
    const ts = await compile(schema as JSONSchema, "Args", {
      bannerComment: "",
      format: false,
      additionalProperties: false,
      declareExternallyReferenced: true,
      unknownAny: true,
      $refOptions: { resolve: { external: false, file: false, http: false } } as never,
    });
    argNamespaces.push(`  namespace ${ns} {\n${indentLines(ts.trim(), "    ")}\n  }`);
    const required = Array.isArray(schema.required) && schema.required.length > 0;
    const argsParam = `args${required ? "" : "?"}: ${binding}_Args.${ns}.Args`;
    const isRead = tool.classification.kind === "read";
    const kindLine = isRead
      ? "Read: recorded as an observation, then returns the tool result."
      : `Write (${tool.classification.autoApprovable ? "auto-approvable" : "needs approval"}): returns a pending handle; the tool runs only after approval. Collect the result with getActionResult.`;
    methods.push({
      name: tool.name,
      doc: [tool.description ?? "(no description)", "", kindLine],
      signature: `(${argsParam}${
        isRead
          ? "): Promise<McpCallToolResult>;"
          : ", options?: McpActionOptions): Promise<McpPendingAction>;"
      }`,
    });
  }
  methods.push({
    name: "getActionResult",
    doc: [
      "Status of an action this binding submitted; once applied, reading its result is recorded as an observation.",
    ],
    signature: "(actionId: number): Promise<McpActionResult>;",
  });
  return [
    `// Binding ${binding}: MCP server "${sanitizeDocText(serverName).replace(/[\r\n]/g, " ")}". Generated by gatekeeper-mcp.`,
    COMMON_DTS,
    `declare namespace ${binding}_Args {\n${argNamespaces.join("\n")}\n}`,
    assembleInterface(binding, [`Tools of MCP server "${serverName}" permitted for this binding.`], methods),
    "",
  ].join("\n");
}
