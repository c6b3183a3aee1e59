/**
 * Which gatekeeper serves a resource URL, and gRPC clients to reach them. The mapping is by URL
 * scheme: `mcp://`, `https://` and loopback `http://` go to the MCP gatekeeper; `git+https://`,
 * `git+ssh://` and `git+file://` will go to the git gatekeeper. A kind with no configured address
 * is refused with a clear error, never guessed.
 */

import { GatekeeperClient } from "@gatehouse/proto";
import { credentials } from "@grpc/grpc-js";
import { InvalidArgument, NoGatekeeperForResource } from "./domain/errors.ts";

/** Gatekeeper kind → "host:port". */
export type GatekeeperAddresses = Record<string, string>;

/**
 * Picks the gatekeeper kind for a URL.
 * @throws InvalidArgument when the URL does not parse; NoGatekeeperForResource for unknown schemes.
 */
export function gatekeeperKindFor(url: string): string {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    throw new InvalidArgument(`url "${url}" is not a URL; expected e.g. mcp://memory or https://host/mcp`);
  }
  const scheme = parsed.protocol.replace(/:$/, "");
  if (scheme === "mcp" || scheme === "https" || scheme === "http") return "mcp";
  if (scheme.startsWith("git+")) return "git";
  throw new NoGatekeeperForResource(
    `no gatekeeper serves "${scheme}:" URLs; supported: mcp://<registered server>, https://host/mcp`,
  );
}

/** Lazily created, reused gRPC clients per gatekeeper kind. */
export class GatekeeperClients {
  private readonly clients = new Map<string, GatekeeperClient>();

  constructor(private readonly addresses: GatekeeperAddresses) {}

  /** @throws NoGatekeeperForResource when no address is configured for `kind`. */
  get(kind: string): GatekeeperClient {
    const existing = this.clients.get(kind);
    if (existing) return existing;
    const address = this.addresses[kind];
    if (!address) {
      throw new NoGatekeeperForResource(
        `the ${kind} gatekeeper is not configured; set GATEKEEPER_ADDRESSES to include ${kind}=host:port`,
      );
    }
    const client = new GatekeeperClient(address, credentials.createInsecure());
    this.clients.set(kind, client);
    return client;
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }
}
