/**
 * ResolveResource: parse the URL, connect, list tools, and return what the agent will see
 * (binding name, trust, permitted methods, generated d.ts, normalized URL) and the binding's action
 * kinds (which a rule may auto-approve, and why not). The only effect on the external system is
 * connecting and listing its tools.
 */
import type { BindingActionKind, ResolveResourceRequest, ResolveResourceResponse } from "@gatehouse/proto";
import { bindingMethodNames } from "./binding-target.ts";
import { type Catalog, loadCatalog } from "./catalog.ts";
import type { ConnectionPool } from "./connections.ts";
import { generateBindingDts } from "./dts.ts";
import { MalformedScopeFragment, ScopeViolation } from "./errors.ts";
import type { RegistryConfig } from "./registry.ts";
import { bindingNameFor, type ResolvedResource, resolveResourceUrl } from "./resource-url.ts";

/**
 * The binding's action kinds: one per permitted tool that is not a read, in the server's order,
 * with whether a rule may auto-approve it (classify.ts) and, when not, why.
 */
export function catalogActionKinds(catalog: Catalog): BindingActionKind[] {
  return [...catalog.tools.values()]
    .filter((t) => t.classification.kind === "action")
    .map(({ classification: c }) => ({
      tag: c.actionKind.tag,
      label: c.actionKind.label,
      autoApprovable: c.autoApprovable,
      notAutoApprovableReason: c.notAutoApprovableReason,
    }));
}

/**
 * The check-only answer: no connection made. Without a suggested name, a URL whose default name is
 * not a binding name (e.g. an IP host) still passes: the person names it when introducing it.
 */
function checkedOnly(resource: ResolvedResource, name: string): ResolveResourceResponse {
  let binding = "";
  try {
    binding = bindingNameFor(resource, name);
  } catch (err) {
    if (name) throw err;
  }
  return {
    binding,
    trust: resource.trust,
    dts: "",
    methods: [],
    url: resource.normalizedUrl,
    actionKinds: undefined,
  };
}

/** Tool names shown when a requested scope names a tool the server lacks. */
const SHOWN_TOOLS = 30;

function missingToolsError(resource: ResolvedResource, missing: string[], listed: string[]): ScopeViolation {
  const offered =
    listed.length === 0
      ? "it lists no tools"
      : `it offers ${listed.slice(0, SHOWN_TOOLS).join(", ")}${listed.length > SHOWN_TOOLS ? ` and ${listed.length - SHOWN_TOOLS} more` : ""}`;
  return new ScopeViolation(
    `scope fragment names tool(s) ${missing.map((t) => `"${t}"`).join(", ")} that server "${resource.serverName}" does not offer (${offered}); fix the #tool= list`,
  );
}

/**
 * The checks of a check-only resolve beyond parsing, for a connection an agent requests: a
 * `#tool=` that permits nothing is refused whatever the server; for a registered stdio server (an
 * administrator's entry, so starting it is safe) the named tools must be ones it lists. An
 * endpoint URL is never contacted.
 * @throws MalformedScopeFragment (empty #tool=), ScopeViolation (unknown tool), ServerUnavailable.
 */
async function checkRequestedScope(resource: ResolvedResource, pool: ConnectionPool): Promise<void> {
  const tools = resource.scope.tools;
  if (tools !== null && tools.size === 0) {
    throw new MalformedScopeFragment(
      'scope fragment "#tool=" permits no tool, so the connection could never be used; name the tools (e.g. #tool=read_text_file) or drop the fragment for all of them',
    );
  }
  if (tools === null || resource.target.kind !== "stdio") return;
  const listed = (await pool.listTools(resource)).map((t) => t.name);
  const missing = [...tools].filter((t) => !listed.includes(t));
  if (missing.length > 0) throw missingToolsError(resource, missing, listed);
}

/**
 * With `req.checkOnly`, the URL is checked against the registry (scheme, registered server or
 * allowed endpoint, scope fragment; an empty `#tool=` is refused, and a registered stdio server's
 * tools are listed to refuse a `#tool=` it does not offer) and no endpoint is contacted: binding,
 * trust and url are set, dts, methods and action kinds are empty.
 * @throws InvalidResourceUrl, MalformedScopeFragment, UnknownServer, InvalidRequest (name),
 *         ScopeViolation (scope names a tool the server does not offer), ServerUnavailable.
 */
export async function resolveResource(
  req: ResolveResourceRequest,
  deps: { registry: RegistryConfig; pool: ConnectionPool },
): Promise<ResolveResourceResponse> {
  const resource = resolveResourceUrl(req.url, deps.registry);
  if (req.checkOnly) {
    await checkRequestedScope(resource, deps.pool);
    return checkedOnly(resource, req.name);
  }
  const binding = bindingNameFor(resource, req.name);
  const catalog = await loadCatalog(deps.pool, resource);
  if (catalog.missingFromServer.length > 0) {
    throw new ScopeViolation(
      `scope fragment names tool(s) ${catalog.missingFromServer.map((t) => `"${t}"`).join(", ")} that server "${resource.serverName}" does not offer; fix the #tool= list`,
    );
  }
  const dts = await generateBindingDts(
    binding,
    resource.serverName,
    [...catalog.tools.values()].map((t) => ({
      name: t.tool.name,
      description: t.tool.description,
      inputSchema: t.tool.inputSchema as Record<string, unknown>,
      classification: t.classification,
    })),
  );
  return {
    binding,
    trust: resource.trust,
    dts,
    methods: bindingMethodNames(catalog),
    url: resource.normalizedUrl,
    actionKinds: { kinds: catalogActionKinds(catalog) },
  };
}
