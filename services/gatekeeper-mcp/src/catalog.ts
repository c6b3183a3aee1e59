/**
 * The permitted tools of a resource: what the server lists, intersected with the scope fragment,
 * each classified (read/action). A tool outside the scope is simply absent: it gets no method,
 * no type, and a call to it can never reach the server.
 */
import { isGrantableMethodName } from "@gatehouse/proto";
import type { Tool } from "@modelcontextprotocol/sdk/types.js";
import { classifyTool, type ToolClassification } from "./classify.ts";
import type { ConnectionPool } from "./connections.ts";
import { ScopeViolation } from "./errors.ts";
import type { ResolvedResource } from "./resource-url.ts";
import { scopePermits } from "./scope-fragment.ts";

/**
 * The one name no tool may take: the binding's own extra method. Names the sandbox cannot take
 * (`isGrantableMethodName` of @gatehouse/proto: a space, non-ASCII, "then", Object.prototype
 * members) are left out too.
 */
export const RESERVED_METHOD_NAMES: ReadonlySet<string> = new Set(["getActionResult"]);

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
    if (
      !scopePermits(resource.scope, tool.name) ||
      !isGrantableMethodName(tool.name) ||
      RESERVED_METHOD_NAMES.has(tool.name)
    )
      continue;
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
