/**
 * Resource URLs of the PostgreSQL gatekeeper, parsed fail-closed (issue 17):
 *
 * - `postgres://<registered-name>/<database>` — a whole database of a server the administrator
 *   registered under `<registered-name>` (registry.ts). The URL never names a host, port, user or
 *   password: those come only from the registry, so an agent cannot point the gatekeeper anywhere
 *   else;
 * - `…#schema=<schema>` — one schema of that database;
 * - `…#table=<schema>.<table>&table=<schema>.<table>` — a set of tables (repeat `table=`).
 *
 * Identifiers are what PostgreSQL folds unquoted names to: lower-case letters, digits, `_` and `$`,
 * starting with a letter or `_`, at most 63 bytes (PostgreSQL docs, "SQL Syntax → Lexical
 * Structure → Identifiers and Key Words"). Mixed-case or quoted identifiers are refused rather
 * than guessed at. Registered names follow the registry's rule (`[a-z][a-z0-9_-]{0,62}`).
 */
import { InvalidResourceUrl } from "./errors.ts";

/** A table named with its schema, both as PostgreSQL folds unquoted identifiers. */
export interface QualifiedTable {
  schema: string;
  table: string;
}

/** What a binding grants inside one database. */
export type PostgresScope =
  | { kind: "database" }
  | { kind: "schema"; schema: string }
  | { kind: "tables"; tables: QualifiedTable[] };

/** A parsed resource URL. Nothing has been looked up in the registry yet. */
export interface PostgresResource {
  /** The administrator's registry name of the server (registry.ts `servers.<name>`). */
  name: string;
  /** The database on that server. */
  database: string;
  scope: PostgresScope;
  /** Canonical URL: `table=` parts in the order given, no redundant parts. */
  normalizedUrl: string;
}

/** Registry names: lower-case start, then letters, digits, `_` or `-` (max 63), as in the MCP registry. */
export const REGISTERED_NAME = /^[a-z][a-z0-9_-]{0,62}$/;
/** An unquoted PostgreSQL identifier after case folding (max 63 bytes: NAMEDATALEN - 1). */
export const IDENTIFIER = /^[a-z_][a-z0-9_$]{0,62}$/;

const FORM = "postgres://<registered-name>/<database>[#schema=<schema> | #table=<schema>.<table>&table=…]";

function fail(what: string): never {
  throw new InvalidResourceUrl(`${what}; the accepted form is ${FORM}`);
}

/** Shows an untrusted fragment of input safely inside a message (no control characters, bounded). */
function shown(s: string): string {
  return s.replace(/[^A-Za-z0-9_.$-]/g, "?").slice(0, 64);
}

function identifier(value: string, what: string): string {
  if (!IDENTIFIER.test(value)) {
    fail(
      `${what} "${shown(value)}" is not a lower-case PostgreSQL identifier (letters a-z, digits, '_' or '$', starting with a letter or '_', at most 63 characters)`,
    );
  }
  return value;
}

function parseFragment(fragment: string): PostgresScope {
  if (fragment === "") fail("the fragment after '#' is empty; drop the '#' or add schema= or table=");
  let schema: string | undefined;
  const tables: QualifiedTable[] = [];
  const seen = new Set<string>();
  for (const part of fragment.split("&")) {
    const eq = part.indexOf("=");
    const key = eq < 0 ? part : part.slice(0, eq);
    const value = eq < 0 ? "" : part.slice(eq + 1);
    if (key !== "schema" && key !== "table") {
      fail(`unknown fragment key "${shown(key)}"; only schema= or table= (repeatable) are allowed`);
    }
    if (value === "") fail(`fragment part "${key}=" has an empty value`);
    if (key === "schema") {
      if (schema !== undefined) fail('fragment key "schema" appears more than once');
      schema = identifier(value, "schema");
    } else {
      const dot = value.indexOf(".");
      if (dot < 0) fail(`fragment part "table=${shown(value)}" must name <schema>.<table>`);
      const t = {
        schema: identifier(value.slice(0, dot), "table schema"),
        table: identifier(value.slice(dot + 1), "table name"),
      };
      const k = `${t.schema}.${t.table}`;
      if (seen.has(k)) fail(`fragment part "table=${k}" appears more than once`);
      seen.add(k);
      tables.push(t);
    }
  }
  if (schema !== undefined && tables.length > 0) {
    fail("a fragment grants either one schema= or a set of table= parts, not both");
  }
  return schema !== undefined ? { kind: "schema", schema } : { kind: "tables", tables };
}

/** Formats a scope as its URL fragment (`""` for a whole database). */
export function formatScopeFragment(scope: PostgresScope): string {
  if (scope.kind === "database") return "";
  if (scope.kind === "schema") return `#schema=${scope.schema}`;
  return `#${scope.tables.map((t) => `table=${t.schema}.${t.table}`).join("&")}`;
}

/**
 * Parses a `postgres://` resource URL (no I/O, no registry look-up).
 * @returns the registered name, database and scope.
 * @throws InvalidResourceUrl naming the part at fault (scheme, user/password, port, query, path,
 *   identifier, fragment key, duplicate, schema with tables) and the accepted form.
 */
export function parsePostgresResource(url: string): PostgresResource {
  if (typeof url !== "string" || url.length > 4096)
    fail("the resource URL must be a string of at most 4096 characters");
  const hash = url.indexOf("#");
  const base = hash < 0 ? url : url.slice(0, hash);
  const fragment = hash < 0 ? undefined : url.slice(hash + 1);
  if (!base.startsWith("postgres://")) {
    const scheme = /^([A-Za-z][A-Za-z0-9+.-]*):/.exec(base)?.[1];
    fail(`the URL scheme must be "postgres://"${scheme ? ` (got "${shown(scheme)}:")` : ""}`);
  }
  const rest = base.slice("postgres://".length);
  if (rest.includes("?"))
    fail("the URL must not carry a query (?…); connection options live in the registry");
  const slash = rest.indexOf("/");
  const authority = slash < 0 ? rest : rest.slice(0, slash);
  const path = slash < 0 ? "" : rest.slice(slash + 1);
  if (authority.includes("@")) {
    fail("the URL must not carry a user or password; credentials live only in the administrator's registry");
  }
  if (authority.includes(":")) {
    fail("the URL must not carry a port; host and port live only in the administrator's registry");
  }
  if (!REGISTERED_NAME.test(authority)) {
    fail(
      `"${shown(authority)}" is not a registered server name (lower-case letters, digits, '_' or '-', starting with a letter); the URL names a registry entry, never a host`,
    );
  }
  if (path === "") fail("the URL must name a database after the server name");
  if (path.includes("/")) fail("the URL path must be exactly one database name (no further '/')");
  const database = identifier(path, "database");
  const scope: PostgresScope = fragment === undefined ? { kind: "database" } : parseFragment(fragment);
  return {
    name: authority,
    database,
    scope,
    normalizedUrl: `postgres://${authority}/${database}${formatScopeFragment(scope)}`,
  };
}
