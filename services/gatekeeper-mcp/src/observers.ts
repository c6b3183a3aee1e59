/**
 * CheckObserver for MCP (gatekeeper.proto `Gatekeeper.CheckObserver`; docs/architecture.md
 * "The approval contract", observers): strategy A, private-only. Every answer is `allowed: false`.
 *
 * Why A and not another strategy:
 * - B (a single-resource ACL check) needs the external system to tell whether *this person* may
 *   read the resource. MCP has no such query: a registered stdio server runs as the gatekeeper's
 *   own process with the admin's configuration (`env` in the registry), and an HTTP endpoint is
 *   reached without any per-person identity. The person's credential has nothing to be checked
 *   against, so a "yes" would be made up.
 * - C (per-data-set tracking) needs to know which data set each observation came from and who may
 *   see each one; tool results are opaque JSON with no such labels.
 * - D (low-stakes) would need an administrator to declare a server's data harmless to share. The
 *   registry (registry.ts) has `vetted` (about auto-approving writes, not about who may read) and
 *   `restricted` / `restrictedTools` (which flag restricted data); `restricted: false` means "not
 *   restricted data", not "anyone may see it", so neither field can stand in for that declaration.
 * Hence A: what an agent read through an MCP binding stays private to the workspace. The
 * credential is ignored (never logged, never stored); the URL is still resolved so a request
 * for a resource this gatekeeper does not serve gets a clear error instead of a finding.
 */
import type { CheckObserverRequest, CheckObserverResponse } from "@gatehouse/proto";
import { InvalidRequest } from "./errors.ts";
import type { RegistryConfig } from "./registry.ts";
import { resolveResourceUrl } from "./resource-url.ts";

/** "user:<id>": the observer a CheckObserver names. */
const OBSERVER = /^user:[A-Za-z0-9][A-Za-z0-9._@+-]{0,127}$/;

/**
 * Answers whether `req.observer` may observe what the binding at `req.url` reads: never (A).
 * @returns `{allowed: false, reason}`; the reason starts with "A: " and names the resource.
 * @throws InvalidRequest naming `observer` when it is not "user:<id>";
 *   InvalidResourceUrl / MalformedScopeFragment / UnknownServer for a URL this gatekeeper does not serve.
 */
export async function checkObserver(
  req: CheckObserverRequest,
  deps: { registry: RegistryConfig },
): Promise<CheckObserverResponse> {
  if (!OBSERVER.test(req.observer)) {
    throw new InvalidRequest('observer must be "user:<id>", e.g. "user:alice"');
  }
  const resource = resolveResourceUrl(req.url, deps.registry);
  return {
    allowed: false,
    reason:
      `A: MCP bindings are private to the workspace; ${resource.normalizedUrl} has no per-person access check, ` +
      "so what the agent read through it cannot be shared. Share a workspace without this binding instead.",
  };
}
