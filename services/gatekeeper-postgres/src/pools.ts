/**
 * Connection pools to the administrator's servers: one `pg.Pool` per (server, database, role),
 * created on first use with the role's password read from its file or environment variable.
 * Every connection identifies itself as `application_name = gatehouse-gatekeeper-postgres`.
 */
import pg from "pg";
import type { Logger } from "pino";
import { DatabaseUnavailable } from "./errors.ts";
import { type RegistryConfig, type RoleCredentials, readPassword, type ServerConfig } from "./registry.ts";

/** `application_name` of every gatekeeper connection (visible in pg_stat_activity and the server log). */
export const APPLICATION_NAME = "gatehouse-gatekeeper-postgres";

/** Which of a server's two roles a connection logs in as. */
export type RoleKind = "read" | "write";

/** Lazily created pools, closed together. */
export class Pools {
  readonly #pools = new Map<string, Promise<pg.Pool>>();
  constructor(
    readonly registry: RegistryConfig,
    readonly env: NodeJS.ProcessEnv,
    readonly logger: Logger,
  ) {}

  /** The pool of `role` on `server`'s `database`. @throws DatabaseUnavailable when the password cannot be read. */
  pool(name: string, server: ServerConfig, database: string, role: RoleKind): Promise<pg.Pool> {
    const key = `${name}/${database}/${role}`;
    let p = this.#pools.get(key);
    if (!p) {
      const creds = role === "read" ? server.readRole : server.writeRole;
      p = this.#create(server, database, creds).catch((e: unknown) => {
        this.#pools.delete(key);
        throw new DatabaseUnavailable(`server ${name}: ${(e as Error).message}`);
      });
      this.#pools.set(key, p);
    }
    return p;
  }

  async #create(server: ServerConfig, database: string, creds: RoleCredentials): Promise<pg.Pool> {
    const password = await readPassword(creds, this.env);
    const pool = new pg.Pool({
      host: server.host,
      port: server.port,
      database,
      user: creds.user,
      password,
      application_name: APPLICATION_NAME,
      max: 10,
      idleTimeoutMillis: 30_000,
      connectionTimeoutMillis: 10_000,
      // TCP keepalive: a connection whose peer vanished without a FIN or RST is found dead eventually.
      keepAlive: true,
    });
    // A backend that dies while idle in the pool must not crash the process; the next checkout reconnects.
    pool.on("error", (e) =>
      this.logger.warn({ event: "pool.error", err: e.message }, "idle connection lost"),
    );
    return pool;
  }

  /** Ends every pool. */
  async close(): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all(pools.map(async (p) => (await p.catch(() => undefined))?.end()));
  }
}
