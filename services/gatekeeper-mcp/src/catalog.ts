/**
 * The permitted tools of a resource: what the server lists, intersected with the scope fragment,
 * each classified (read/action). A tool outside the scope is simply absent: it gets no method,
 * no type, and a call to it can never reach the server.
 */
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { classifyTool, type ToolClassification } from "./classify.ts";
import type { ConnectionPool } from "./connections.ts";
import { ScopeViolation } from "./errors.ts";
import type { ResolvedResource } from "./resource-url.ts";
import { scopePermits } from "./scope-fragment.ts";

/** Names that can never be tool methods: the extra method, and names capnweb refuses to call. */
export const RESERVED_METHOD_NAMES: ReadonlySet<string> = new Set([
  "getActionResult",
  ...Object.getOwnPropertyNames(Object.prototype),
]);

/**
 * Tool names the sandbox runner accepts as method names (its start-message check): 1-128 visible
 * ASCII characters, as the MCP specification's tool-name guidance has them (letters, digits, `_`,
 * `-`, `.`, `/`). A tool named otherwise (a space, non-ASCII) would make the sandbox refuse every
 * run of the workspace, so it gets no method, like a reserved name.
 */
const USABLE_METHOD_NAME = /^[\x21-\x7e]{1,128}$/;

/** True when `name` can be a binding method: usable by the sandbox, not reserved, not "then". */
export function usableToolName(name: string): boolean {
  return USABLE_METHOD_NAME.test(name) && name !== "then" && !RESERVED_METHOD_NAMES.has(name);
}

/** One permitted tool. */
export interface CatalogTool {
  tool: Tool;
  classification: ToolClassification;
}

/** The permitted tools by name, plus the names the scope asked for that the server does not list. */
export interface Catalog {
  tools: ReadonlyMap<string, CatalogTool>;
  missingFromServer: string[];
}

/**
 * Lists the server's tools and keeps the permitted ones.
 * @throws ServerUnavailable when listing fails.
 */
export async function loadCatalog(pool: ConnectionPool, resource: ResolvedResource): Promise<Catalog> {
  const listed = await pool.listTools(resource);
  const tools = new Map<string, CatalogTool>();
  for (const tool of listed) {
    if (!scopePermits(resource.scope, tool.name) || !usableToolName(tool.name)) continue;
    tools.set(tool.name, { tool, classification: classifyTool(tool, resource.trust === "vetted") });
  }
  const listedNames = new Set(listed.map((t) => t.name));
  const missingFromServer = resource.scope.tools
    ? [...resource.scope.tools].filter((t) => !listedNames.has(t))
    : [];
  return { tools, missingFromServer };
}

/**
 * The permitted tool `name`.
 * @throws ScopeViolation when the tool is not permitted (outside scope, or unknown).
 */
export function permittedTool(catalog: Catalog, name: string, serverName: string): CatalogTool {
  const t = catalog.tools.get(name);
  if (!t) {
    throw new ScopeViolation(
      `tool "${name}" is not permitted for this binding of "${serverName}"; re-introduce the resource with #tool=${name} to allow it`,
    );
  }
  return t;
}
