/**
 * CheckObserver for PostgreSQL: strategy B (a single-resource ACL check). A person may observe a
 * binding only if their own database role can read every table the workspace read through it:
 * the gatekeeper logs in to the registered server as that person (credential "role:password",
 * used for this one check, never stored or logged) and asks `has_table_privilege(…, 'SELECT')`.
 *
 * Which tables: those this process saw the workspace read (every query's relations). When it knows
 * none (nothing read yet, or the gatekeeper restarted since), every table in the binding's scope
 * is checked — stricter, never looser.
 */
import type { CheckObserverRequest, CheckObserverResponse } from "@gatehouse/proto";
import pg from "pg";
import { openResource } from "./binding.ts";
import { APPLICATION_NAME } from "./pools.ts";
import type { RegistryConfig } from "./registry.ts";
import type { PostgresState } from "./state.ts";

/** Connection and query timeout of the check, milliseconds. */
export const OBSERVER_CHECK_TIMEOUT_MS = 20_000;

/** Decides whether `req.observer` may observe the binding of `req.url`. @throws InvalidResourceUrl. */
export async function checkObserver(
  req: CheckObserverRequest,
  registry: RegistryConfig,
  state: PostgresState,
): Promise<CheckObserverResponse> {
  const { resource, server } = openResource(req.url, registry);
  const who = req.observer.replace(/[^A-Za-z0-9:@._-]/g, "?").slice(0, 100);
  const colon = req.credential.indexOf(":");
  if (colon <= 0 || colon === req.credential.length - 1) {
    return { allowed: false, reason: `B: ${who} must give their own database role as "role:password"` };
  }
  const read = state.peek(req.workspaceId, req.binding)?.readTables;
  const client = new pg.Client({
    host: server.host,
    port: server.port,
    database: resource.database,
    user: req.credential.slice(0, colon),
    password: req.credential.slice(colon + 1),
    application_name: APPLICATION_NAME,
    connectionTimeoutMillis: OBSERVER_CHECK_TIMEOUT_MS,
    statement_timeout: OBSERVER_CHECK_TIMEOUT_MS,
  });
  try {
    await client.connect();
  } catch {
    return { allowed: false, reason: `B: ${who}'s own credential cannot log in to the database` };
  }
  try {
    let tables: string[];
    if (read && read.size > 0) tables = [...read];
    else if (resource.scope.kind === "tables")
      tables = resource.scope.tables.map((t) => `${t.schema}.${t.table}`);
    else {
      const cond =
        resource.scope.kind === "schema"
          ? { where: "n.nspname = $1", params: [resource.scope.schema] }
          : {
              where:
                "n.nspname NOT IN ('pg_catalog', 'information_schema', 'gatehouse') AND n.nspname NOT LIKE 'pg\\_%'",
              params: [],
            };
      const r = await client.query<{ t: string }>(
        `SELECT n.nspname || '.' || c.relname AS t FROM pg_catalog.pg_class c
           JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
          WHERE c.relkind IN ('r', 'v', 'm', 'p', 'f') AND ${cond.where}`,
        cond.params,
      );
      tables = r.rows.map((x) => x.t);
    }
    const r = await client.query<{ t: string; ok: boolean | null }>(
      `SELECT t, pg_catalog.has_table_privilege(current_user, pg_catalog.to_regclass(t), 'SELECT') AS ok
         FROM unnest($1::text[]) AS t`,
      [tables],
    );
    const denied = r.rows.filter((x) => x.ok !== true).map((x) => x.t);
    if (denied.length > 0) {
      return {
        allowed: false,
        reason: `B: ${who}'s own role cannot read ${denied.length} table(s) the workspace read: ${denied.slice(0, 10).join(", ")}`,
      };
    }
    return {
      allowed: true,
      reason: `B: ${who}'s own role can read all ${tables.length} table(s) the workspace read`,
    };
  } finally {
    await client.end().catch(() => undefined);
  }
}
