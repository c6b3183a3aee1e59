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
import { ScopeViolation } from "./errors.ts";
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

/**
 * With `req.checkOnly`, only the URL is checked against the registry (scheme, registered server or
 * allowed endpoint, scope fragment) and nothing is connected to: binding, trust and url are set,
 * dts, methods and action kinds are empty.
 * @throws InvalidResourceUrl, MalformedScopeFragment, UnknownServer, InvalidRequest (name),
 *         ScopeViolation (scope names a tool the server does not offer), ServerUnavailable.
 */
export async function resolveResource(
  req: ResolveResourceRequest,
  deps: { registry: RegistryConfig; pool: ConnectionPool },
): Promise<ResolveResourceResponse> {
  const resource = resolveResourceUrl(req.url, deps.registry);
  if (req.checkOnly) return checkedOnly(resource, req.name);
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
