/**
 * What every read and write of one binding session shares: who it acts for, the resolved server,
 * the simulation state, limits, and the checks every statement passes before it reaches the
 * database (the scope check, parameter shapes, the gatekeeper's reserved schema).
 */
import { type ApprovalQueue, oneLine } from "@gatehouse/gatekeeper-kit";
import { parseSync } from "libpg-query";
import type pg from "pg";
import type { TxSettings } from "./db.ts";
import { InvalidRequest, InvalidResourceUrl, SqlSyntaxError, StatementRefused } from "./errors.ts";
import type { Limits } from "./limits.ts";
import type { Pools, RoleKind } from "./pools.ts";
import { lookupServer, type RegistryConfig, type ServerConfig } from "./registry.ts";
import {
  formatScopeFragment,
  type PostgresResource,
  parsePostgresResource,
  type QualifiedTable,
} from "./resource-url.ts";
import type { BindingState, SqlParam } from "./state.ts";
import {
  checkStatementSync,
  defaultSchema,
  type ScopeDecision,
  type StatementMethod,
} from "./statement-scope.ts";

/** Schema of the gatekeeper's own marker table (apply.ts); no agent statement may touch it. */
export const RESERVED_SCHEMA = "gatehouse";

/** A resource URL resolved against the registry. */
export interface OpenedResource {
  resource: PostgresResource;
  server: ServerConfig;
}

/**
 * Parses `url` and finds its server and database in the registry.
 * @throws InvalidResourceUrl (malformed, or the name/database is not registered — worded alike, so a
 *   caller cannot probe which servers exist).
 */
export function openResource(url: string, registry: RegistryConfig): OpenedResource {
  const resource = parsePostgresResource(url);
  const server = lookupServer(registry, resource.name, resource.database);
  if (!server) {
    throw new InvalidResourceUrl(
      `no server "${resource.name}" with database "${resource.database}" is registered with this gatekeeper; ask an administrator to add it to the postgres registry`,
    );
  }
  return { resource, server };
}

/** Transaction settings of a resource: its scope's default schema and the server's statement timeout. */
export function settingsOf(opened: OpenedResource): TxSettings {
  return {
    searchPath: defaultSchema(opened.resource.scope),
    statementTimeoutMs: opened.server.statementTimeoutMs,
  };
}

/** A statement that passed every check. */
export type CheckedStatement = Extract<ScopeDecision, { ok: true }> & { sql: string; params: SqlParam[] };

/**
 * Checks `sql` for `method` within the resource's scope, and again that it names no table of the
 * reserved schema. @throws SqlSyntaxError (with PostgreSQL's message and position), StatementRefused.
 */
export function checkSql(
  opened: OpenedResource,
  sql: string,
  method: StatementMethod,
): ScopeDecision & { ok: true } {
  const d = checkStatementSync(sql, {
    method,
    scope: opened.resource.scope,
    allowDdl: opened.server.allowDdl,
  });
  if (!d.ok) {
    if (d.position !== undefined) throw new SqlSyntaxError(`${d.reason} (at position ${d.position})`);
    throw new StatementRefused(`refused before reaching the database: ${d.reason}`);
  }
  const reserved = d.relations.find((r) => r.schema === RESERVED_SCHEMA);
  if (reserved) {
    throw new StatementRefused(
      `refused before reaching the database: schema ${RESERVED_SCHEMA} holds the gatekeeper's own records and is never in a binding's scope`,
    );
  }
  return d;
}

/** Who the session acts for. */
export interface SessionContext {
  workspaceId: string;
  binding: string;
  callerToken: string;
}

/** The shared context of one binding session. */
export class Binding {
  constructor(
    readonly ctx: SessionContext,
    readonly opened: OpenedResource,
    readonly state: BindingState,
    readonly approval: ApprovalQueue,
    readonly limits: Limits,
    readonly pools: Pools,
  ) {}

  get resource(): PostgresResource {
    return this.opened.resource;
  }

  get settings(): TxSettings {
    return settingsOf(this.opened);
  }

  /** The pool of `role` for this binding's database. */
  pool(role: RoleKind): Promise<pg.Pool> {
    return this.pools.pool(this.resource.name, this.opened.server, this.resource.database, role);
  }

  /**
   * `crm/sales` plus the scope as plain text (`oneLine`: every script kept, invisible characters
   * as tokens, ≤200 grapheme clusters); pass text holding it through `oneLine` for Markdown.
   */
  get label(): string {
    const f = formatScopeFragment(this.resource.scope);
    return oneLine(`${this.resource.name}/${this.resource.database}${f ? `#${f}` : ""}`, 200);
  }

  /**
   * Validates `query`/`execute` arguments: `sql` a non-empty string within `maxSqlBytes`, `params` a
   * list of strings, finite numbers, booleans or nulls. @throws InvalidRequest naming the field.
   */
  statementArgs(args: unknown, method: string): { sql: string; params: SqlParam[] } {
    if (args === null || typeof args !== "object" || Array.isArray(args)) {
      throw new InvalidRequest(
        `${method} takes { sql: string, params?: (string | number | boolean | null)[] }`,
      );
    }
    const a = args as { sql?: unknown; params?: unknown };
    if (typeof a.sql !== "string" || a.sql.trim() === "")
      throw new InvalidRequest(`${method}.sql must be a non-empty string`);
    if (Buffer.byteLength(a.sql) > this.limits.maxSqlBytes) {
      throw new InvalidRequest(`${method}.sql is over ${this.limits.maxSqlBytes} bytes`);
    }
    const params = a.params ?? [];
    if (!Array.isArray(params) || params.length > this.limits.maxParams) {
      throw new InvalidRequest(`${method}.params must be a list of at most ${this.limits.maxParams} values`);
    }
    params.forEach((p, i) => {
      const ok =
        p === null ||
        typeof p === "string" ||
        typeof p === "boolean" ||
        (typeof p === "number" && Number.isFinite(p));
      if (!ok) {
        throw new InvalidRequest(
          `${method}.params[${i}] must be a string, a finite number, a boolean or null (pass JSON or arrays as a string and cast, e.g. $1::jsonb)`,
        );
      }
    });
    return { sql: a.sql, params: params as SqlParam[] };
  }

  /** Restricted columns of `table` per the registry (names only). */
  restrictedColumnsOf(table: QualifiedTable): string[] {
    const prefix = `${table.schema}.${table.table}.`;
    return this.opened.server.restrictedColumns
      .filter((c) => c.startsWith(prefix))
      .map((c) => c.slice(prefix.length));
  }

  /**
   * Whether a read of `sql` (touching `relations`) may return a restricted column's data, decided
   * conservatively from the parse tree: a touched table has restricted columns and the statement
   * names one of them, uses `*`, or names a whole row (a lone table name or alias). A replayed
   * pending write that touched such a table also counts: it may have copied the data elsewhere.
   */
  readsRestricted(sql: string, relations: readonly QualifiedTable[]): boolean {
    const pendingTouch = this.state.overlay
      .pending()
      .some((p) => p.write.target && this.restrictedColumnsOf(p.write.target).length > 0);
    if (pendingTouch) return true;
    const restricted = new Set(relations.flatMap((r) => this.restrictedColumnsOf(r)));
    if (restricted.size === 0) return false;
    const names = new Set<string>(relations.map((r) => r.table));
    let hit = false;
    const walk = (v: unknown): void => {
      if (hit || v === null || typeof v !== "object") return;
      if (Array.isArray(v)) {
        for (const x of v) walk(x);
        return;
      }
      const o = v as Record<string, unknown>;
      if (o.alias && typeof (o.alias as { aliasname?: unknown }).aliasname === "string") {
        names.add((o.alias as { aliasname: string }).aliasname);
      }
      const ref = o.ColumnRef as { fields?: Record<string, unknown>[] } | undefined;
      if (ref?.fields) {
        const fields = ref.fields;
        const strs = fields.map((f) => (f.String as { sval?: string } | undefined)?.sval);
        if (fields.some((f) => "A_Star" in f)) hit = true;
        const last = strs[strs.length - 1];
        if (last !== undefined && restricted.has(last)) hit = true;
        if (fields.length === 1 && last !== undefined && names.has(last)) hit = true;
      }
      for (const x of Object.values(o)) walk(x);
    };
    // Aliases first, then references (an alias may be declared after its use in the text).
    const tree = parseSync(sql);
    walk(tree);
    if (!hit) walk(tree);
    return hit;
  }
}
