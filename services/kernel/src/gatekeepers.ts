/**
 * Which gatekeeper serves a resource URL, and gRPC clients to reach them. The mapping is by URL
 * scheme (GATEKEEPER_SCHEMES): `mcp://`, `https://` and loopback `http://` go to the MCP
 * gatekeeper; `git+file://`, `git+https://`, `git+ssh://` and loopback `git+http://` to the git
 * gatekeeper; `postgres://<registered server>/<database>` to the PostgreSQL gatekeeper. A kind with
 * no configured address is refused with a clear error, never guessed.
 */

import { GatekeeperClient } from "@gatehouse/proto";
import { type ClientOptions, credentials } from "@grpc/grpc-js";
import { InvalidArgument, NoGatekeeperForResource } from "./domain/errors.ts";

/**
 * The one table of URL schemes a gatekeeper serves: scheme (no ":") → gatekeeper kind and the
 * form shown to a user whose URL has another scheme.
 */
export const GATEKEEPER_SCHEMES: Readonly<Record<string, { kind: string; example: string }>> = {
  mcp: { kind: "mcp", example: "mcp://<registered server>" },
  https: { kind: "mcp", example: "https://host/mcp" },
  http: { kind: "mcp", example: "http://127.0.0.1:<port>/mcp (loopback only)" },
  "git+file": { kind: "git", example: "git+file:///abs/path/repo.git" },
  "git+https": { kind: "git", example: "git+https://host/org/repo.git" },
  "git+ssh": { kind: "git", example: "git+ssh://git@host/org/repo.git" },
  "git+http": { kind: "git", example: "git+http://127.0.0.1:<port>/repo.git (loopback only)" },
  postgres: { kind: "postgres", example: "postgres://<registered server>/<database>" },
};

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
  const served = Object.hasOwn(GATEKEEPER_SCHEMES, scheme) ? GATEKEEPER_SCHEMES[scheme] : undefined;
  if (served) return served.kind;
  const supported = Object.values(GATEKEEPER_SCHEMES)
    .map((s) => s.example)
    .join(", ");
  throw new NoGatekeeperForResource(`no gatekeeper serves "${scheme}:" URLs; supported: ${supported}`);
}

/**
 * Gatekeeper kind → what a person does to configure it, for the refusal of a URL whose kind has no
 * address (e.g. `gatehouse dev`: "start gatehouse dev with --postgres-registry <file>"). A kind
 * without an entry gets "set GATEKEEPER_ADDRESSES to include <kind>=host:port".
 */
export type UnconfiguredHints = Record<string, string>;

/** Lazily created, reused gRPC clients per gatekeeper kind. */
export class GatekeeperClients {
  private readonly clients = new Map<string, GatekeeperClient>();

  /** @param clientOptions grpc-js options of every client (e.g. the tracing interceptor). */
  constructor(
    private readonly addresses: GatekeeperAddresses,
    private readonly hints: UnconfiguredHints = {},
    private readonly clientOptions: ClientOptions = {},
  ) {}

  /**
   * @throws NoGatekeeperForResource when no address is configured for `kind`, saying how to
   *   configure it (the kind's hint, else GATEKEEPER_ADDRESSES).
   */
  get(kind: string): GatekeeperClient {
    const existing = this.clients.get(kind);
    if (existing) return existing;
    const address = Object.hasOwn(this.addresses, kind) ? this.addresses[kind] : undefined;
    if (!address) {
      const hint = Object.hasOwn(this.hints, kind) ? this.hints[kind] : undefined;
      throw new NoGatekeeperForResource(
        `the ${kind} gatekeeper is not configured; ${hint ?? `set GATEKEEPER_ADDRESSES to include ${kind}=host:port`}`,
      );
    }
    const client = new GatekeeperClient(address, credentials.createInsecure(), this.clientOptions);
    this.clients.set(kind, client);
    return client;
  }

  close(): void {
    for (const c of this.clients.values()) c.close();
    this.clients.clear();
  }
}
