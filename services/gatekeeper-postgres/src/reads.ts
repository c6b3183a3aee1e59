/**
 * Reads of a PostgreSQL binding: query, listTables, describeTable. Each runs in a transaction that
 * is always rolled back. Without pending writes it is `READ ONLY` as the registry's read role; with
 * pending writes it runs as the write role, replays them in submission order (db.ts), then turns
 * the transaction read-only (`SET LOCAL transaction_read_only = on`) and, when the write role is a
 * member of the read role, switches to the read role (`SET LOCAL ROLE`) before the read. The data is
 * recorded as an observation (one per page) before it is returned; a failed read records nothing.
 *
 * `query` pages by rows and bytes: a page holds at most `maxRows` rows and what fits one reply;
 * `nextOffset` continues. Each page re-runs the statement (add ORDER BY for stable pages).
 */
import {
  buildDescription,
  checkReplyFits,
  inlineSafe,
  observePage,
  oneLine,
  type PageDescription,
  replyBudget,
  serializedBytes,
} from "@gatehouse/gatekeeper-kit";
import pg from "pg";
import Cursor from "pg-cursor";
import { type Binding, checkSql } from "./binding.ts";
import { inTransaction, isConnectionError, replayPending, type SkippedWrite, typeParsers } from "./db.ts";
import { InvalidRequest, NotFound, RowTooLarge } from "./errors.ts";
import type { QualifiedTable } from "./resource-url.ts";
import type { SqlParam } from "./state.ts";

/** One column of a result. */
export interface ResultColumn {
  name: string;
  /** PostgreSQL type name, e.g. "int4", "text", "timestamptz". */
  type: string;
}

/** A page of a query's result. */
export interface QueryPage {
  columns: ResultColumn[];
  /** Rows keyed by column name (a repeated name gets a suffix: `id_2`). int8 and numeric come as strings. */
  rows: Record<string, unknown>[];
  /** Row offset of this page's first row. */
  offset: number;
  /** True when more rows follow; pass `nextOffset` to read them. */
  more: boolean;
  nextOffset?: number;
  /** Provisional ids of the pending writes this read includes. */
  pending: string[];
  /** Pending writes that no longer apply to the database as it is now, left out of this read. */
  skippedPending?: SkippedWrite[];
}

const typeNames = new Map<number, string>(
  Object.entries(pg.types.builtins).map(([name, oid]) => [oid as number, name.toLowerCase()]),
);

/** Page descriptions are recorded with the statement fenced, bounded. */
function describeRead(
  b: Binding,
  headline: string,
  sql: string | undefined,
  restricted: boolean,
): PageDescription {
  const d = buildDescription({
    headline: inlineSafe(headline, 400),
    details: [`Resource: ${inlineSafe(`postgres://${b.label}`, 300)}`],
    blocks:
      sql === undefined ? [] : [{ label: "Statement (untrusted):", text: sql, lang: "sql", maxBytes: 4096 }],
  });
  return {
    title: oneLine(headline, 200),
    description: d.description,
    containsRestrictedData: restricted,
    kind: "postgres.read",
  };
}

/**
 * Runs `fn` in a read transaction of the binding (pending writes replayed first).
 * @returns fn's result, the replayed ids and the skipped ones.
 */
async function readTx<T>(b: Binding, what: string, fn: (c: pg.PoolClient) => Promise<T>) {
  const pending = b.state.overlay
    .pending()
    .map((p) => ({ localId: p.localId, sql: p.write.sql, params: p.write.params }));
  const pool = await b.pool(pending.length > 0 ? "write" : "read");
  return inTransaction(
    pool,
    b.settings,
    { readOnly: pending.length === 0, commit: false, what },
    async (c) => {
      const skipped = pending.length > 0 ? await replayPending(c, pending) : [];
      if (pending.length > 0) {
        await c.query("SET LOCAL transaction_read_only = on");
        // Drop to the read role for the read itself when the administrator made the write role a
        // member of it, so the database enforces the read grant here too (docs: "Roles").
        // PostgreSQL 16 split SET ROLE out of membership (`GRANT … WITH SET`); 15 and older: MEMBER.
        await c.query(
          `SELECT set_config('role', $1, true) WHERE pg_has_role(current_user, $1,
             CASE WHEN current_setting('server_version_num')::int >= 160000 THEN 'SET' ELSE 'MEMBER' END)`,
          [b.opened.server.readRole.user],
        );
      }
      const out = await fn(c);
      const skippedIds = new Set(skipped.map((s) => s.id));
      return { out, pending: pending.map((p) => p.localId).filter((id) => !skippedIds.has(id)), skipped };
    },
  );
}

function offsetArg(v: unknown): number {
  if (v === undefined) return 0;
  if (!Number.isSafeInteger(v) || (v as number) < 0)
    throw new InvalidRequest("query.offset must be a non-negative integer");
  return v as number;
}

/** Runs a read-only statement; one page of its rows. */
export async function query(b: Binding, args?: unknown): Promise<QueryPage> {
  const { sql, params } = b.statementArgs(args, "query");
  const offset = offsetArg((args as { offset?: unknown }).offset);
  const decision = checkSql(b.opened, sql, "read");
  const restricted = b.readsRestricted(sql, decision.relations);
  const budget = replyBudget(b.limits.maxFrameBytes) - 4096;
  const page = Math.floor(offset / b.limits.maxRows);
  const result = await observePage(
    b.approval,
    b.ctx.callerToken,
    (r: QueryPage) =>
      describeRead(
        b,
        `Query on ${b.label}: ${r.rows.length} row(s) from offset ${r.offset}${r.more ? ", more follow" : ""}${r.pending.length ? `, with pending write(s) ${r.pending.join(", ")}` : ""}`,
        sql,
        restricted,
      ),
    page,
    async () => {
      const run = await readTx(b, "the query", (c) =>
        fetchPage(c, sql, params, offset, b.limits.maxRows, budget),
      );
      return {
        ...run.out,
        offset,
        pending: run.pending,
        ...(run.skipped.length > 0 ? { skippedPending: run.skipped } : {}),
      };
    },
  );
  for (const t of decision.relations) b.state.readTables.add(`${t.schema}.${t.table}`);
  return result.data;
}

/**
 * Reads up to `n` rows of the cursor, with the result's field descriptions. pg-cursor never calls
 * back when the connection dies mid-read, so the client's `error`/`end` events reject too.
 */
function readChunk(
  c: pg.PoolClient,
  cursor: Cursor,
  n: number,
): Promise<{ rows: unknown[][]; fields: pg.FieldDef[] }> {
  return new Promise((resolve, reject) => {
    const lost = (e?: unknown) => {
      cleanup();
      reject(e instanceof Error ? e : new Error("Connection terminated unexpectedly"));
    };
    const cleanup = () => {
      c.off("error", lost);
      c.off("end", lost);
    };
    c.once("error", lost);
    c.once("end", lost);
    cursor.read(n, (err, rows, result) => {
      cleanup();
      if (err) reject(err);
      else resolve({ rows: rows as unknown[][], fields: result?.fields ?? [] });
    });
  });
}

async function fetchPage(
  c: pg.PoolClient,
  sql: string,
  params: SqlParam[],
  offset: number,
  maxRows: number,
  budget: number,
): Promise<Omit<QueryPage, "offset" | "pending">> {
  const cursor = c.query(new Cursor(sql, params, { rowMode: "array", types: typeParsers(pg.types) }));
  // The cursor also emits its error as an event; it reaches us through the read callback or the
  // client's events, so the event itself only needs a listener (else: an uncaught exception).
  cursor.on("error", () => undefined);
  let broken = false;
  try {
    let skipped = 0;
    let fields: pg.FieldDef[] = [];
    while (skipped < offset) {
      const chunk = await readChunk(c, cursor, Math.min(1000, offset - skipped));
      fields = chunk.fields;
      if (chunk.rows.length === 0) break;
      skipped += chunk.rows.length;
    }
    const rows: Record<string, unknown>[] = [];
    let columns: ResultColumn[] = [];
    let names: string[] = [];
    let bytes = 0;
    let more = false;
    for (;;) {
      const read = await readChunk(c, cursor, Math.min(100, maxRows + 1 - rows.length));
      const chunk = read.rows;
      if (columns.length === 0) {
        const f = read.fields.length > 0 ? read.fields : fields;
        const seen = new Map<string, number>();
        names = f.map((x) => {
          const n = (seen.get(x.name) ?? 0) + 1;
          seen.set(x.name, n);
          return n === 1 ? x.name : `${x.name}_${n}`;
        });
        columns = f.map((x, i) => ({
          name: names[i] as string,
          type: typeNames.get(x.dataTypeID) ?? `oid:${x.dataTypeID}`,
        }));
      }
      if (chunk.length === 0) break;
      let stop = false;
      for (const raw of chunk) {
        if (rows.length === maxRows) {
          more = true;
          stop = true;
          break;
        }
        const row = Object.fromEntries(names.map((n, i) => [n, raw[i]]));
        const size = serializedBytes(row) + 1;
        if (bytes + size > budget) {
          if (rows.length === 0) {
            throw new RowTooLarge(
              `row ${offset} of the result is larger than one reply can carry (${size} bytes); select fewer or shorter columns`,
            );
          }
          more = true;
          stop = true;
          break;
        }
        bytes += size;
        rows.push(row);
      }
      if (stop) break;
    }
    const page = { columns, rows, more, ...(more ? { nextOffset: offset + rows.length } : {}) };
    checkReplyFits(page, budget + 4096, "query page", "select fewer columns");
    return page;
  } catch (e) {
    broken = isConnectionError(e);
    throw e;
  } finally {
    if (!broken) await cursor.close().catch(() => undefined);
  }
}

/** A table or view in the binding's scope. */
export interface TableInfo {
  schema: string;
  name: string;
  kind: "table" | "view" | "materialized view" | "partitioned table" | "foreign table";
}

const KIND_OF: Record<string, TableInfo["kind"]> = {
  r: "table",
  v: "view",
  m: "materialized view",
  p: "partitioned table",
  f: "foreign table",
};

/** The scope as a SQL condition on `n.nspname` / `c.relname` with its parameters. */
function scopeCondition(b: Binding): { where: string; params: unknown[] } {
  const s = b.resource.scope;
  if (s.kind === "schema") return { where: "n.nspname = $1", params: [s.schema] };
  if (s.kind === "tables") {
    return {
      where: "(n.nspname || '.' || c.relname) = ANY ($1::text[])",
      params: [s.tables.map((t) => `${t.schema}.${t.table}`)],
    };
  }
  return {
    where:
      "n.nspname NOT IN ('pg_catalog', 'information_schema', 'gatehouse') AND n.nspname NOT LIKE 'pg\\_%'",
    params: [],
  };
}

/** Every table and view in scope (pending DDL included). */
export async function listTables(b: Binding): Promise<{ tables: TableInfo[] }> {
  const cond = scopeCondition(b);
  const r = await observePage(
    b.approval,
    b.ctx.callerToken,
    (t: TableInfo[]) => describeRead(b, `Listed ${t.length} table(s) of ${b.label}`, undefined, false),
    0,
    async () =>
      (
        await readTx(b, "listTables", (c) =>
          c.query<{ schema: string; name: string; relkind: string }>(
            `SELECT n.nspname AS schema, c.relname AS name, c.relkind::text AS relkind
               FROM pg_catalog.pg_class c JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
              WHERE c.relkind IN ('r', 'v', 'm', 'p', 'f') AND ${cond.where}
              ORDER BY 1, 2 LIMIT 10000`,
            cond.params,
          ),
        )
      ).out.rows.map((x) => ({ schema: x.schema, name: x.name, kind: KIND_OF[x.relkind] ?? "table" })),
  );
  return { tables: r.data };
}

/** One column of a described table. */
export interface ColumnInfo {
  name: string;
  type: string;
  nullable: boolean;
  default: string | null;
  /** True when the administrator marked it restricted: reading it latches the workspace. */
  restricted: boolean;
}

/** Parses `describeTable`'s `table` ("schema.table", or "table" in the scope's default schema). */
function tableArg(b: Binding, v: unknown): QualifiedTable {
  if (typeof v !== "string" || !/^([a-z_][a-z0-9_$]{0,62}\.)?[a-z_][a-z0-9_$]{0,62}$/.test(v)) {
    throw new InvalidRequest(
      'describeTable.table must be "schema.table" or "table" in lower-case identifiers',
    );
  }
  const parts = v.split(".");
  const schema = parts.length === 2 ? (parts[0] as string) : b.settings.searchPath;
  if (schema === undefined) {
    throw new InvalidRequest('this binding spans several schemas; name the table as "schema.table"');
  }
  const t = { schema, table: parts[parts.length - 1] as string };
  checkSql(b.opened, `SELECT 1 FROM ${t.schema}.${t.table}`, "read");
  return t;
}

/** Columns, primary key and restricted flags of one table in scope. @throws NotFound, StatementRefused. */
export async function describeTable(
  b: Binding,
  args?: unknown,
): Promise<{ schema: string; table: string; columns: ColumnInfo[]; primaryKey: string[] }> {
  const t = tableArg(b, (args as { table?: unknown } | undefined)?.table);
  const restricted = new Set(b.restrictedColumnsOf(t));
  const r = await observePage(
    b.approval,
    b.ctx.callerToken,
    () => describeRead(b, `Described table ${t.schema}.${t.table} of ${b.label}`, undefined, false),
    0,
    async () => {
      const { out } = await readTx(b, "describeTable", async (c) => {
        const cols = await c.query<{ name: string; type: string; nullable: boolean; default: string | null }>(
          `SELECT a.attname AS name, pg_catalog.format_type(a.atttypid, a.atttypmod) AS type,
                  NOT a.attnotnull AS nullable, pg_catalog.pg_get_expr(d.adbin, d.adrelid) AS default
             FROM pg_catalog.pg_attribute a
             LEFT JOIN pg_catalog.pg_attrdef d ON d.adrelid = a.attrelid AND d.adnum = a.attnum
            WHERE a.attrelid = pg_catalog.to_regclass($1) AND a.attnum > 0 AND NOT a.attisdropped
            ORDER BY a.attnum`,
          [`"${t.schema}"."${t.table}"`],
        );
        const pk = await c.query<{ attname: string }>(
          `SELECT a.attname FROM pg_catalog.pg_index i
             JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
            WHERE i.indrelid = pg_catalog.to_regclass($1) AND i.indisprimary
            ORDER BY pg_catalog.array_position(i.indkey::int2[], a.attnum)`,
          [`"${t.schema}"."${t.table}"`],
        );
        return { cols: cols.rows, pk: pk.rows.map((x) => x.attname) };
      });
      if (out.cols.length === 0) throw new NotFound(`table ${t.schema}.${t.table} does not exist`);
      return out;
    },
  );
  return {
    schema: t.schema,
    table: t.table,
    columns: r.data.cols.map((c) => ({ ...c, restricted: restricted.has(c.name) })),
    primaryKey: r.data.pk,
  };
}
