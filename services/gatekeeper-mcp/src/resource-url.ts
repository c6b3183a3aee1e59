/**
 * Resource URLs of the MCP gatekeeper and how they resolve against the admin registry.
 *
 * - `mcp://<registered-name>[#scope]`: a registered stdio server (or a registered endpoint by name).
 *   This is the ONLY way a command is ever launched, and only one the admin wrote down.
 * - `https://host/path[#scope]`: a Streamable HTTP endpoint. `http://` only for loopback hosts
 *   (127.0.0.0/8, ::1, localhost). Trust is "vetted" only when the URL is a registered endpoint an
 *   admin marked vetted; any other pasted URL is "byo" (bring your own).
 */
import { InvalidRequest, InvalidResourceUrl, MalformedScopeFragment, UnknownServer } from "./errors.ts";
import type { HttpEndpointConfig, RegistryConfig, StdioServerConfig } from "./registry.ts";
import { formatScopeFragment, parseScopeFragment, type Scope } from "./scope-fragment.ts";

/** "vetted": admin-vetted registry entry; "byo": anything else. */
export type Trust = "vetted" | "byo";

/** Where and how to reach the MCP server of a resource. */
export type ResourceTarget =
  | { kind: "stdio"; name: string; server: StdioServerConfig }
  | { kind: "http"; url: string; endpoint: HttpEndpointConfig | null };

/** A resource URL resolved against the registry. No connection has been made. */
export interface ResolvedResource {
  /** Server name (registry name, or host of an unregistered URL); basis of the default binding name. */
  serverName: string;
  target: ResourceTarget;
  scope: Scope;
  trust: Trust;
  /** Every observation of this resource is restricted data. */
  restricted: boolean;
  /** Observations of these tools are restricted data. */
  restrictedTools: ReadonlySet<string>;
  /** The URL with its scope fragment in canonical order. */
  normalizedUrl: string;
  /** Key identifying the connection to reuse (same server/endpoint => same client). */
  connectionKey: string;
}

function splitFragment(url: string): { base: string; fragment: string | undefined } {
  const i = url.indexOf("#");
  return i < 0 ? { base: url, fragment: undefined } : { base: url.slice(0, i), fragment: url.slice(i + 1) };
}

/** True for 127.0.0.0/8, ::1 and localhost (URL hostnames as WHATWG URL spells them). */
export function isLoopbackHost(hostname: string): boolean {
  const h = hostname.toLowerCase();
  if (h === "localhost" || h === "[::1]") return true;
  const m = /^127\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(h);
  return m?.slice(1).every((o) => Number(o) <= 255) ?? false;
}

function checkServerPin(scope: Scope, name: string, fragment: string | undefined): void {
  if (scope.server !== null && scope.server !== name) {
    throw new MalformedScopeFragment(
      `scope fragment part "server=${scope.server}" (in "#${fragment}") does not match the resource's server "${name}"`,
    );
  }
}

function withFragment(base: string, scope: Scope): string {
  const f = formatScopeFragment(scope);
  return f === "" ? base : `${base}#${f}`;
}

function fromEndpoint(name: string, ep: HttpEndpointConfig, scope: Scope, base: string): ResolvedResource {
  return {
    serverName: name,
    target: { kind: "http", url: ep.url, endpoint: ep },
    scope,
    trust: ep.vetted ? "vetted" : "byo",
    restricted: ep.restricted,
    restrictedTools: new Set(ep.restrictedTools),
    normalizedUrl: withFragment(base, scope),
    connectionKey: `http:${new URL(ep.url).href}`,
  };
}

/**
 * Parses a resource URL and resolves it against the registry (no I/O).
 * @throws InvalidResourceUrl for a bad or refused scheme/host/path,
 *         MalformedScopeFragment for a bad fragment (naming the part),
 *         UnknownServer for `mcp://` names missing from the registry.
 */
export function resolveResourceUrl(url: string, registry: RegistryConfig): ResolvedResource {
  if (typeof url !== "string" || url.trim() === "") {
    throw new InvalidResourceUrl("url is empty; give mcp://<registered-name> or https://host/path");
  }
  const { base, fragment } = splitFragment(url.trim());
  const scope = parseScopeFragment(fragment);

  if (/^mcp:/i.test(base)) {
    const m = /^mcp:\/\/([^/?#@:]+)\/?$/i.exec(base);
    if (!m) {
      throw new InvalidResourceUrl(
        `url "${base}" is not mcp://<registered-name> (no path, port, query or user info allowed)`,
      );
    }
    const name = m[1]!.toLowerCase();
    checkServerPin(scope, name, fragment);
    const server = registry.servers[name];
    if (server) {
      return {
        serverName: name,
        target: { kind: "stdio", name, server },
        scope,
        trust: server.vetted ? "vetted" : "byo",
        restricted: server.restricted,
        restrictedTools: new Set(server.restrictedTools),
        normalizedUrl: withFragment(`mcp://${name}`, scope),
        connectionKey: `stdio:${name}`,
      };
    }
    const ep = registry.endpoints[name];
    if (ep) return fromEndpoint(name, ep, scope, `mcp://${name}`);
    throw new UnknownServer(
      `mcp://${name} names no registered server; ask an admin to add "${name}" to the server registry`,
    );
  }

  let parsed: URL;
  try {
    parsed = new URL(base);
  } catch {
    throw new InvalidResourceUrl(
      `url "${base}" is not an absolute URL; give mcp://<name> or https://host/path`,
    );
  }
  if (parsed.protocol !== "https:" && parsed.protocol !== "http:") {
    throw new InvalidResourceUrl(
      `url scheme "${parsed.protocol}" is not supported; use mcp://<registered-name> or https://host/path`,
    );
  }
  if (parsed.protocol === "http:" && !isLoopbackHost(parsed.hostname)) {
    throw new InvalidResourceUrl(
      `plain http:// is refused for host "${parsed.hostname}"; use https:// (http:// only for loopback hosts)`,
    );
  }
  if (parsed.username !== "" || parsed.password !== "") {
    throw new InvalidResourceUrl(
      "url must not carry user info (user:password@); configure credentials elsewhere",
    );
  }
  const href = parsed.href;
  for (const [name, ep] of Object.entries(registry.endpoints)) {
    if (new URL(ep.url).href === href) {
      checkServerPin(scope, name, fragment);
      return fromEndpoint(name, ep, scope, href);
    }
  }
  const host = parsed.hostname.replace(/^\[|\]$/g, "");
  if (scope.server !== null) {
    throw new MalformedScopeFragment(
      `scope fragment part "server=${scope.server}" (in "#${fragment}") names a registered server, but ${href} is not a registered endpoint`,
    );
  }
  return {
    serverName: host,
    target: { kind: "http", url: href, endpoint: null },
    scope,
    trust: "byo",
    restricted: false,
    restrictedTools: new Set(),
    normalizedUrl: withFragment(href, scope),
    connectionKey: `http:${href}`,
  };
}

/** Binding names: upper-case identifiers (`MEMORY`, `FS_2`). */
export const BINDING_NAME = /^[A-Z][A-Z0-9_]*$/;

/**
 * The binding name for a resource: the suggested name upper-cased, else the server name (or host)
 * upper-cased with non-alphanumerics turned into `_`.
 * @throws InvalidRequest (field `name`) when the result does not match /^[A-Z][A-Z0-9_]*$/.
 */
export function bindingNameFor(resource: ResolvedResource, suggested: string): string {
  const raw = suggested.trim() !== "" ? suggested.trim().toUpperCase() : resource.serverName.toUpperCase();
  const name = suggested.trim() !== "" ? raw : raw.replace(/[^A-Z0-9_]/g, "_");
  if (!BINDING_NAME.test(name)) {
    throw new InvalidRequest(
      `name "${raw}" is not a valid binding name; use upper-case letters, digits and '_', starting with a letter`,
    );
  }
  return name;
}
