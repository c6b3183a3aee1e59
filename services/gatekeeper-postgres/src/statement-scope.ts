/**
 * Decides what one SQL statement may do before it reaches any database (issue 17). The statement
 * is parsed with PostgreSQL's own parser (`libpg-query`, PostgreSQL 18 grammar) and its whole
 * syntax tree is walked; anything this module does not explicitly allow is refused (fail closed).
 *
 * Rules:
 * - **One statement.** A second statement after `;` is refused.
 * - **Kinds.** Method `read` (query, listTables, describeTable): `SELECT` (including `WITH … SELECT`,
 *   `VALUES`, set operations, and `EXPLAIN [ANALYZE]` of such a query). Method `write` (execute):
 *   `INSERT`, `UPDATE`, `DELETE`; an `UPDATE`/`DELETE` without `WHERE` is allowed and flagged
 *   `no_where_clause`. DDL (`CREATE TABLE`, `ALTER TABLE`, `CREATE INDEX`, `DROP TABLE|INDEX|VIEW|SEQUENCE`,
 *   `TRUNCATE`) only through `write` and only when the registry entry sets `allowDdl`. Every other
 *   statement kind is refused by name (COPY, SET/RESET, SHOW, DO, CALL, GRANT, LISTEN/NOTIFY,
 *   transaction control, PREPARE/EXECUTE, LOCK, VACUUM, MERGE, cursors, functions, roles, …).
 * - **No side effects inside a query.** Locking clauses (`FOR UPDATE/SHARE`, PostgreSQL docs "SELECT →
 *   The Locking Clause"), `SELECT … INTO` (creates a table), data-modifying statements in `WITH`
 *   (docs "WITH Queries → Data-Modifying Statements in WITH") and `WHERE CURRENT OF` are refused in
 *   both methods: a write must be a single, plain INSERT/UPDATE/DELETE so its effect can be simulated.
 * - **Relations.** Every relation anywhere in the tree (FROM, JOIN, sub-queries in any expression,
 *   CTE bodies, INSERT … SELECT, UPDATE … FROM, DELETE … USING, RETURNING, the target) must be in the
 *   scope. A CTE name shadows tables only for an unqualified name, and only inside the query that
 *   defines it (for a non-recursive WITH: in the later CTEs and the main query; for WITH RECURSIVE:
 *   in every CTE of that WITH) — docs "WITH Queries". Outside it, the same name is the real table.
 * - **Unqualified names** resolve to the scope's *default schema* (`defaultSchema`): the granted
 *   schema; for a set of tables, their schema when they all share one (otherwise an unqualified name
 *   is refused as ambiguous); for a whole database, `public`. The executing layer must set
 *   `search_path` to exactly that schema so PostgreSQL resolves names the same way. An unqualified
 *   name starting with `pg_` is refused: `pg_catalog` is searched before the search path (docs
 *   "Schemas → The System Catalog Schema"). System schemas (`pg_catalog`, `information_schema`,
 *   `pg_toast`, any `pg_*`) are refused outright.
 * - **Functions.** Only the built-ins in `ALLOWED_FUNCTIONS` (unqualified or `pg_catalog.`-qualified),
 *   or a function qualified with a schema the scope grants (a schema scope's schema; any non-system
 *   schema of a database scope; none for a set of tables). Everything else is refused by name —
 *   file access (`pg_read_file`, `lo_import`), `dblink*`, `pg_sleep`, `set_config`/`current_setting`,
 *   backend signalling, advisory locks, txid functions, sequence functions (`nextval`), … .
 *
 * Errors are returned, not thrown: `checkStatement` resolves to a `ScopeDecision` and rejects only
 * on a bug (e.g. the WASM module failed to load).
 */
import { loadModule, parseSync } from "libpg-query";
import type { PostgresScope, QualifiedTable } from "./resource-url.ts";

/** `read`: query / listTables / describeTable. `write`: execute. */
export type StatementMethod = "read" | "write";

/** The statement kinds a decision may allow. */
export type StatementKind = "select" | "insert" | "update" | "delete" | "ddl";

/** `no_where_clause`: an UPDATE or DELETE that changes every row of its table. */
export type StatementFlag = "no_where_clause";

/**
 * The outcome of a check. `relations` lists every relation the statement touches (deduplicated,
 * schema resolved). On refusal, `reason` says what was refused and why; `position` is set for a
 * syntax error: PostgreSQL's 1-based character offset of the error, as `psql` shows it.
 */
export type ScopeDecision =
  | { ok: true; kind: StatementKind; relations: QualifiedTable[]; flags: StatementFlag[] }
  | { ok: false; reason: string; position?: number };

/** What to check a statement against. */
export interface ScopeCheckOptions {
  method: StatementMethod;
  scope: PostgresScope;
  /** The registry entry's `allowDdl` (default false). */
  allowDdl?: boolean;
}

/**
 * Built-in functions a statement may call. Pure functions of their arguments (plus the clock and
 * the session's user names): no file, network, lock, setting, sequence or backend access.
 */
export const ALLOWED_FUNCTIONS: ReadonlySet<string> = new Set([
  // aggregates (docs "Aggregate Functions")
  ...["count", "sum", "avg", "min", "max", "bool_and", "bool_or", "every", "array_agg", "string_agg"],
  ...["json_agg", "jsonb_agg", "json_object_agg", "jsonb_object_agg", "stddev", "stddev_pop"],
  ...["stddev_samp", "variance", "var_pop", "var_samp", "percentile_cont", "percentile_disc", "mode"],
  // window functions
  ...["row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead"],
  ...["first_value", "last_value", "nth_value"],
  // conditional (docs "Conditional Expressions"; coalesce/nullif/greatest/least are also syntax)
  ...["coalesce", "nullif", "greatest", "least", "num_nulls", "num_nonnulls"],
  // strings (docs "String Functions and Operators")
  ...["length", "char_length", "character_length", "octet_length", "bit_length", "lower", "upper"],
  ...["initcap", "btrim", "ltrim", "rtrim", "trim", "substring", "substr", "position", "strpos"],
  ...["overlay", "replace", "concat", "concat_ws", "left", "right", "lpad", "rpad", "repeat"],
  ...["reverse", "split_part", "starts_with", "translate", "format", "md5", "sha256", "sha512"],
  ...["encode", "decode", "regexp_replace", "regexp_match", "regexp_matches", "regexp_like"],
  ...["regexp_split_to_array", "regexp_split_to_table", "ascii", "chr", "quote_ident"],
  ...["quote_literal", "quote_nullable", "to_hex", "string_to_array", "array_to_string", "like_escape"],
  ...["normalize", "unistr", "casefold"],
  // math (docs "Mathematical Functions and Operators")
  ...["abs", "ceil", "ceiling", "floor", "round", "trunc", "sign", "sqrt", "cbrt", "power", "pow"],
  ...["exp", "ln", "log", "log10", "mod", "div", "pi", "degrees", "radians", "sin", "cos", "tan"],
  ...["asin", "acos", "atan", "atan2", "gcd", "lcm", "width_bucket", "scale", "random", "numeric"],
  // date/time (docs "Date/Time Functions and Operators")
  ...["now", "current_timestamp", "current_date", "current_time", "localtimestamp", "localtime"],
  ...["clock_timestamp", "statement_timestamp", "transaction_timestamp", "date_trunc", "date_part"],
  ...["extract", "age", "make_date", "make_time", "make_timestamp", "make_timestamptz"],
  ...["make_interval", "to_char", "to_date", "to_timestamp", "to_number", "date_bin", "isfinite"],
  ...["justify_days", "justify_hours", "justify_interval", "timezone", "overlaps"],
  // json (docs "JSON Functions and Operators")
  ...["to_json", "to_jsonb", "json_build_object", "jsonb_build_object", "json_build_array"],
  ...["jsonb_build_array", "json_object", "jsonb_object", "json_array_length", "jsonb_array_length"],
  ...["json_each", "jsonb_each", "json_each_text", "jsonb_each_text", "json_extract_path"],
  ...["jsonb_extract_path", "json_extract_path_text", "jsonb_extract_path_text", "json_object_keys"],
  ...["jsonb_object_keys", "json_array_elements", "jsonb_array_elements", "json_array_elements_text"],
  ...["jsonb_array_elements_text", "json_typeof", "jsonb_typeof", "jsonb_set", "jsonb_insert"],
  ...["jsonb_strip_nulls", "json_strip_nulls", "jsonb_pretty", "jsonb_path_query", "jsonb_path_exists"],
  ...["jsonb_path_match", "jsonb_path_query_array", "jsonb_path_query_first", "row_to_json"],
  // arrays (docs "Array Functions and Operators")
  ...["array_length", "array_position", "array_positions", "array_append", "array_prepend"],
  ...["array_cat", "array_remove", "array_replace", "array_dims", "array_lower", "array_upper"],
  ...["cardinality", "unnest", "generate_series", "generate_subscripts"],
  // uuid, type helpers
  ...["gen_random_uuid", "uuidv4", "uuidv7", "pg_typeof"],
]);

/** System schemas: refused as relation and function qualifiers (docs "Schemas"). */
function isSystemSchema(schema: string): boolean {
  return schema === "information_schema" || schema.startsWith("pg_");
}

/** Statement kinds refused with a specific reason (the rest get a generic one). */
const REFUSED_KINDS: Record<string, string> = {
  CopyStmt: "COPY reads or writes files and programs on the server",
  VariableSetStmt: "SET/RESET changes session settings (including the role)",
  VariableShowStmt: "SHOW reads server settings",
  DoStmt: "DO runs an anonymous code block",
  CallStmt: "CALL runs a procedure",
  GrantStmt: "GRANT/REVOKE changes privileges",
  GrantRoleStmt: "GRANT/REVOKE of a role changes privileges",
  ListenStmt: "LISTEN subscribes to notifications",
  UnlistenStmt: "UNLISTEN changes notification subscriptions",
  NotifyStmt: "NOTIFY sends a notification",
  TransactionStmt: "transaction control is the gatekeeper's (every statement runs in its own transaction)",
  PrepareStmt: "PREPARE creates a session-level prepared statement",
  ExecuteStmt: "EXECUTE runs a prepared statement the gatekeeper cannot inspect",
  DeallocateStmt: "DEALLOCATE changes session state",
  LockStmt: "LOCK takes table locks",
  VacuumStmt: "VACUUM/ANALYZE is maintenance",
  ClusterStmt: "CLUSTER is maintenance",
  ReindexStmt: "REINDEX is maintenance",
  CheckPointStmt: "CHECKPOINT is maintenance",
  DiscardStmt: "DISCARD changes session state",
  LoadStmt: "LOAD loads a shared library",
  MergeStmt: "MERGE is not supported; use INSERT, UPDATE or DELETE",
  DeclareCursorStmt: "cursors are not supported",
  FetchStmt: "cursors are not supported",
  ClosePortalStmt: "cursors are not supported",
  CreateFunctionStmt: "creating functions or procedures runs code",
  CreateRoleStmt: "roles are the administrator's",
  AlterRoleStmt: "roles are the administrator's",
  DropRoleStmt: "roles are the administrator's",
  CreateExtensionStmt: "extensions are the administrator's",
  AlterSystemStmt: "ALTER SYSTEM changes server configuration",
  CreateTableAsStmt: "CREATE TABLE AS / SELECT INTO creates a table from a query",
  RefreshMatViewStmt: "REFRESH MATERIALIZED VIEW is not supported",
  ExplainStmt: "EXPLAIN is allowed only of a SELECT through a read method",
};

/** DDL statement kinds `allowDdl` admits (each one's target relations are checked against the scope). */
const DDL_KINDS = new Set(["CreateStmt", "AlterTableStmt", "IndexStmt", "DropStmt", "TruncateStmt"]);
const DROPPABLE = new Set(["OBJECT_TABLE", "OBJECT_INDEX", "OBJECT_VIEW", "OBJECT_SEQUENCE"]);

/**
 * Node types allowed inside a DML statement. A node of any other type is refused (fail closed):
 * e.g. `CurrentOfExpr`, `RangeTableSample`, XML and SQL/JSON constructors.
 */
const ALLOWED_NODES = new Set([
  ...["SelectStmt", "InsertStmt", "UpdateStmt", "DeleteStmt", "RangeVar", "FuncCall", "ResTarget"],
  ...["A_Const", "ColumnRef", "ParamRef", "A_Expr", "BoolExpr", "TypeCast", "SubLink", "CaseExpr"],
  ...["CaseWhen", "CoalesceExpr", "MinMaxExpr", "NullTest", "BooleanTest", "A_ArrayExpr"],
  ...["A_Indirection", "A_Indices", "A_Star", "RowExpr", "JoinExpr", "RangeSubselect", "RangeFunction"],
  ...["SortBy", "WindowDef", "CommonTableExpr", "String", "Integer", "Float", "Boolean", "BitString"],
  ...["List", "TypeName", "Alias", "MultiAssignRef", "SetToDefault", "CollateClause", "GroupingSet"],
  ...["SQLValueFunction", "GroupingFunc", "IndexElem", "CTESearchClause", "CTECycleClause"],
  "NamedArgExpr",
]);

/** Fields holding an un-wrapped node whose type is implied by the field name. */
const IMPLIED: Record<string, string> = {
  larg: "SelectStmt",
  rarg: "SelectStmt",
  withClause: "WithClause",
  intoClause: "IntoClause",
};

class Refusal extends Error {}

/** The schema an unqualified relation name resolves to, or `undefined` when ambiguous (refused). */
export function defaultSchema(scope: PostgresScope): string | undefined {
  if (scope.kind === "database") return "public";
  if (scope.kind === "schema") return scope.schema;
  const schemas = new Set(scope.tables.map((t) => t.schema));
  return schemas.size === 1 ? [...schemas][0] : undefined;
}

function inScope(scope: PostgresScope, t: QualifiedTable): boolean {
  if (scope.kind === "database") return true;
  if (scope.kind === "schema") return t.schema === scope.schema;
  return scope.tables.some((s) => s.schema === t.schema && s.table === t.table);
}

function describeScope(scope: PostgresScope): string {
  if (scope.kind === "database") return "the database (non-system schemas)";
  if (scope.kind === "schema") return `schema ${scope.schema}`;
  return `tables ${scope.tables.map((t) => `${t.schema}.${t.table}`).join(", ")}`;
}

type Json = Record<string, unknown>;
const isObj = (v: unknown): v is Json => typeof v === "object" && v !== null && !Array.isArray(v);

/** Walks one statement's tree, collecting relations and refusing what is not allowed. */
class Walker {
  readonly relations = new Map<string, QualifiedTable>();
  /** CTE names visible at the current point, innermost last. */
  private readonly ctes: Set<string>[] = [];
  constructor(
    private readonly scope: PostgresScope,
    readonly method: StatementMethod,
  ) {}

  relation(rv: Json, allowCte = true): void {
    const name = String(rv.relname);
    const qualifier = typeof rv.schemaname === "string" ? rv.schemaname : undefined;
    if (typeof rv.catalogname === "string") {
      throw new Refusal(`relation ${rv.catalogname}.${qualifier}.${name}: cross-database names are refused`);
    }
    if (qualifier === undefined && allowCte && this.ctes.some((s) => s.has(name))) return;
    let schema = qualifier;
    if (schema === undefined) {
      if (name.startsWith("pg_")) {
        throw new Refusal(
          `relation ${name}: unqualified names starting with pg_ resolve to the system catalog, which is refused`,
        );
      }
      schema = defaultSchema(this.scope);
      if (schema === undefined) {
        throw new Refusal(
          `relation ${name} is unqualified and the granted tables span several schemas; write <schema>.${name}`,
        );
      }
    }
    if (isSystemSchema(schema)) {
      throw new Refusal(`relation ${schema}.${name}: system catalogs (${schema}) are refused in queries`);
    }
    const t = { schema, table: name };
    if (!inScope(this.scope, t)) {
      throw new Refusal(
        `relation ${schema}.${name} is outside the granted scope (${describeScope(this.scope)})`,
      );
    }
    this.relations.set(`${schema}.${name}`, t);
  }

  func(fc: Json): void {
    const parts = (fc.funcname as Json[]).map((p) => String((p.String as Json | undefined)?.sval));
    const name = parts[parts.length - 1] ?? "";
    const shown = parts.join(".");
    if (parts.length === 1 || (parts.length === 2 && parts[0] === "pg_catalog")) {
      if (ALLOWED_FUNCTIONS.has(name)) return;
      throw new Refusal(`function ${shown} is not on the list of allowed built-in functions`);
    }
    const schema = parts.length === 2 ? (parts[0] ?? "") : "";
    const granted =
      parts.length === 2 &&
      !isSystemSchema(schema) &&
      (this.scope.kind === "database" || (this.scope.kind === "schema" && this.scope.schema === schema));
    if (!granted)
      throw new Refusal(`function ${shown} is outside the granted scope (${describeScope(this.scope)})`);
  }

  /** Walks a WITH clause; the CTE names stay visible (pushed) until `popWith`. */
  withClause(w: Json): void {
    const ctes = ((w.ctes as Json[] | undefined) ?? []).map((c) => c.CommonTableExpr as Json);
    const frame = new Set<string>();
    if (w.recursive === true) for (const c of ctes) frame.add(String(c.ctename));
    this.ctes.push(frame);
    for (const c of ctes) {
      const body = c.ctequery as Json;
      if (!("SelectStmt" in body)) {
        throw new Refusal(
          `WITH ${String(c.ctename)}: data-modifying statements in WITH are refused; a write is one plain INSERT, UPDATE or DELETE`,
        );
      }
      this.visit(c, "CommonTableExpr");
      frame.add(String(c.ctename));
    }
  }

  /** Visits a node's fields; `type` is the node type (from its wrapper or implied by its field). */
  visit(node: Json, type: string | undefined): void {
    if (type === "RangeVar" || (type === undefined && typeof node.relname === "string")) {
      this.relation(node);
      return;
    }
    if (type === "FuncCall") this.func(node);
    if (type === "SelectStmt") {
      if (node.lockingClause !== undefined) {
        throw new Refusal("locking clauses (FOR UPDATE, FOR SHARE, …) are refused; reads never lock rows");
      }
      if (node.intoClause !== undefined) throw new Refusal("SELECT … INTO creates a table and is refused");
    }
    const pushed = node.withClause !== undefined && isObj(node.withClause);
    if (pushed) this.withClause(node.withClause as Json);
    try {
      for (const [key, value] of Object.entries(node)) {
        if (key === "withClause" || key === "ctename") continue;
        // The target of INSERT/UPDATE/DELETE is always a real table: a CTE never shadows it.
        if (key === "relation" && type !== undefined && type in WRITE_KINDS && isObj(value)) {
          this.relation(value, false);
          continue;
        }
        this.field(key, value);
      }
    } finally {
      if (pushed) this.ctes.pop();
    }
  }

  field(key: string, value: unknown): void {
    if (Array.isArray(value)) {
      for (const v of value) this.field(key, v);
      return;
    }
    if (!isObj(value)) return;
    const keys = Object.keys(value);
    const wrapped = keys.length === 1 && /^[A-Z]/.test(keys[0] ?? "") && isObj(value[keys[0] ?? ""]);
    if (wrapped) {
      const type = keys[0] as string;
      if (!ALLOWED_NODES.has(type)) {
        if (type === "InsertStmt" || type === "UpdateStmt" || type === "DeleteStmt" || type === "MergeStmt") {
          throw new Refusal("nested data-modifying statements are refused");
        }
        throw new Refusal(`${type} is not supported inside a statement`);
      }
      if (type === "InsertStmt" || type === "UpdateStmt" || type === "DeleteStmt") {
        throw new Refusal("nested data-modifying statements are refused");
      }
      this.visit(value[type] as Json, type);
      return;
    }
    this.visit(value, IMPLIED[key]);
  }
}

let loaded: Promise<void> | undefined;

/** Loads the parser's WASM module once (idempotent; `checkStatement` calls it). */
export function loadParser(): Promise<void> {
  loaded ??= loadModule();
  return loaded;
}

function refuse(reason: string, position?: number): ScopeDecision {
  return position === undefined ? { ok: false, reason } : { ok: false, reason, position };
}

/**
 * Parses `sql` and decides whether `options.method` may run it within `options.scope`.
 * @returns a `ScopeDecision`; refusals (syntax errors included) are values, never exceptions.
 */
export async function checkStatement(sql: string, options: ScopeCheckOptions): Promise<ScopeDecision> {
  await loadParser();
  return checkStatementSync(sql, options);
}

/** `checkStatement` for callers that awaited `loadParser()` already. */
export function checkStatementSync(sql: string, options: ScopeCheckOptions): ScopeDecision {
  let tree: { stmts?: { stmt: Json }[] };
  try {
    tree = parseSync(sql) as unknown as typeof tree;
  } catch (err) {
    const details = (err as { sqlDetails?: { message: string; cursorPosition: number } }).sqlDetails;
    if (details) return refuse(details.message, details.cursorPosition + 1);
    return refuse(`the statement could not be parsed: ${(err as Error).message}`);
  }
  const stmts = tree.stmts ?? [];
  if (stmts.length === 0) return refuse("the statement is empty");
  if (stmts.length > 1) {
    return refuse(`exactly one statement is allowed; found ${stmts.length} (a second statement after ';')`);
  }
  const wrapper = stmts[0]?.stmt as Json;
  const type = Object.keys(wrapper)[0] as string;
  const node = wrapper[type] as Json;
  try {
    return decide(type, node, options);
  } catch (err) {
    if (err instanceof Refusal) return refuse(err.message);
    throw err;
  }
}

const WRITE_KINDS: Record<string, StatementKind> = {
  InsertStmt: "insert",
  UpdateStmt: "update",
  DeleteStmt: "delete",
};

function decide(type: string, node: Json, options: ScopeCheckOptions): ScopeDecision {
  const { method, scope } = options;
  const w = new Walker(scope, method);
  const done = (kind: StatementKind, flags: StatementFlag[] = []): ScopeDecision => ({
    ok: true,
    kind,
    relations: [...w.relations.values()],
    flags,
  });
  if (
    type === "SelectStmt" ||
    (type === "ExplainStmt" && method === "read" && "SelectStmt" in (node.query as Json))
  ) {
    if (method !== "read") return refuse("a SELECT goes through a read method (query), not execute");
    w.field("stmt", type === "SelectStmt" ? { SelectStmt: node } : node.query);
    return done("select");
  }
  const writeKind = WRITE_KINDS[type];
  if (writeKind !== undefined) {
    if (method !== "write") {
      return refuse(`a write (${writeKind.toUpperCase()}) through a read method is refused; use execute`);
    }
    w.visit(node, type);
    const flags: StatementFlag[] =
      writeKind !== "insert" && node.whereClause === undefined ? ["no_where_clause"] : [];
    return done(writeKind, flags);
  }
  if (DDL_KINDS.has(type)) {
    if (method !== "write") return refuse("DDL through a read method is refused");
    if (!options.allowDdl)
      return refuse("DDL (CREATE/ALTER/DROP/TRUNCATE) is not allowed for this server (allowDdl)");
    if (type === "DropStmt") {
      if (!DROPPABLE.has(String(node.removeType))) {
        return refuse(`DROP of ${String(node.removeType).replace("OBJECT_", "").toLowerCase()} is refused`);
      }
      for (const o of node.objects as Json[]) {
        const names = ((o.List as Json).items as Json[]).map((i) => String((i.String as Json).sval));
        const relname = names.pop() as string;
        w.relation(names.length ? { schemaname: names.pop(), relname } : { relname }, false);
      }
      return done("ddl");
    }
    // Check every relation the DDL names (its target, REFERENCES, INHERITS, LIKE) and function.
    const deep = (v: unknown): void => {
      if (Array.isArray(v)) {
        for (const x of v) deep(x);
        return;
      }
      if (!isObj(v)) return;
      if (typeof v.relname === "string") {
        w.relation(v, false);
        return;
      }
      if (isObj(v.FuncCall)) w.func(v.FuncCall);
      for (const x of Object.values(v)) deep(x);
    };
    deep(node);
    return done("ddl");
  }
  const why = REFUSED_KINDS[type];
  if (type === "CopyStmt" && node.is_program === true) {
    return refuse("COPY … TO/FROM PROGRAM runs a shell command on the server and is refused");
  }
  if (type === "VariableSetStmt" && node.name === "role")
    return refuse("SET ROLE changes the session's role and is refused");
  if (type === "ExplainStmt") {
    const analyze = ((node.options as Json[] | undefined) ?? []).some(
      (o) => (o.DefElem as Json)?.defname === "analyze",
    );
    if (analyze) return refuse("EXPLAIN ANALYZE of anything but a SELECT executes it and is refused");
  }
  const label = type.replace(/Stmt$/, "");
  return refuse(
    why
      ? `${label} is refused: ${why}`
      : `statement kind ${label} is not allowed (only SELECT, INSERT, UPDATE, DELETE)`,
  );
}
