/**
 * The `.d.ts` an agent sees for one binding, generated from the tools' input JSON Schemas with
 * json-schema-to-typescript. Schemas come from the MCP server and are UNTRUSTED, so before
 * generation they are sanitized:
 * - `tsType` / `tsEnumNames` (json-schema-to-typescript extensions that inject raw TypeScript) are dropped;
 * - `$ref`s that are not local (`#...`) are replaced by "any value", so generation never reads files
 *   or the network; `$id`/`id` are dropped;
 * - `description`/`title` text is cleaned so it cannot close a doc comment (`*\/`).
 * Tool descriptions in method doc comments are cleaned the same way.
 */
import { compile, type JSONSchema } from "json-schema-to-typescript";
import type { ToolClassification } from "./classify.ts";

/** One permitted tool as the d.ts generator needs it. */
export interface DtsTool {
  name: string;
  description?: string | undefined;
  inputSchema: Record<string, unknown>;
  classification: ToolClassification;
}

const MAX_DOC_CHARS = 2000;

/** Makes text safe inside a `/** ... *\/` comment: no `*\/`, no control characters, bounded. */
export function sanitizeDocText(text: string): string {
  const cleaned = text
    .replace(/\*\//g, "*\u200b/")
    .replace(/\/\*/g, "/\u200b*")
    // biome-ignore lint/suspicious/noControlCharactersInRegex: stripping control characters on purpose
    .replace(/[\u0000-\u0008\u000b-\u001f\u007f\u2028\u2029]/g, " ");
  return cleaned.length > MAX_DOC_CHARS ? `${cleaned.slice(0, MAX_DOC_CHARS)} …` : cleaned;
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

const IDENT = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function methodKey(name: string): string {
  return IDENT.test(name) ? name : JSON.stringify(name);
}

function namespaceIdent(name: string, used: Set<string>): string {
  let base = name.replace(/[^A-Za-z0-9_]/g, "_");
  if (!/^[A-Za-z_]/.test(base)) base = `_${base}`;
  let candidate = base;
  for (let i = 2; used.has(candidate); i++) candidate = `${base}_${i}`;
  used.add(candidate);
  return candidate;
}

function indent(text: string, prefix: string): string {
  return text
    .split("\n")
    .map((l) => (l === "" ? l : prefix + l))
    .join("\n");
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
  const methods: string[] = [];
  for (const tool of [...tools].sort((a, b) => a.name.localeCompare(b.name))) {
    const ns = namespaceIdent(tool.name, used);
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
    argNamespaces.push(`  namespace ${ns} {\n${indent(ts.trim(), "    ")}\n  }`);
    const required = Array.isArray(schema.required) && schema.required.length > 0;
    const argsParam = `args${required ? "" : "?"}: ${binding}_Args.${ns}.Args`;
    const doc = sanitizeDocText(tool.description ?? "(no description)");
    const isRead = tool.classification.kind === "read";
    const kindLine = isRead
      ? "Read: recorded as an observation, then returns the tool result."
      : `Write (${tool.classification.autoApprovable ? "auto-approvable" : "needs approval"}): returns a pending handle; the tool runs only after approval. Collect the result with getActionResult.`;
    const docLines = [...doc.split("\n"), "", kindLine].map((l) => `   * ${l}`.trimEnd());
    methods.push(
      `  /**\n${docLines.join("\n")}\n   */\n  ${methodKey(tool.name)}(${argsParam}${
        isRead
          ? "): Promise<McpCallToolResult>;"
          : ", options?: McpActionOptions): Promise<McpPendingAction>;"
      }`,
    );
  }
  methods.push(
    "  /** Status of an action this binding submitted; once applied, reading its result is recorded as an observation. */\n  getActionResult(actionId: number): Promise<McpActionResult>;",
  );
  return [
    `// Binding ${binding}: MCP server "${sanitizeDocText(serverName).replace(/[\r\n]/g, " ")}". Generated by gatekeeper-mcp.`,
    COMMON_DTS,
    `declare namespace ${binding}_Args {\n${argNamespaces.join("\n")}\n}`,
    `/** Tools of MCP server "${sanitizeDocText(serverName)}" permitted for this binding. */`,
    `interface ${binding} {\n${methods.join("\n")}\n}`,
    "",
  ].join("\n");
}
