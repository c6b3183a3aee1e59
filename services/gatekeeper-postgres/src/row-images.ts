/**
 * The rows a write changes, as PostgreSQL's jsonb text of whole rows, captured inside the caller's
 * transaction (a simulation rolls it back; an apply commits it):
 *
 * - INSERT: `after` of each inserted row (RETURNING);
 * - DELETE: `before` of each deleted row (RETURNING returns the deleted rows);
 * - UPDATE: the statement runs once under a savepoint to learn which rows it changes (their primary
 *   keys), is rolled back to the savepoint, the `before` of those rows is read and locked
 *   (`FOR UPDATE`), and the statement runs again for real, giving each `after`. Without a primary
 *   key, or when the statement assigns a key column, rows cannot be paired: `before` stays null
 *   and `paired` is false (the change is shown after-only and cannot be reverted).
 */

import { parseSync } from "libpg-query";
import type pg from "pg";
import type { QualifiedTable } from "./resource-url.ts";
import type { RowImage, SqlParam } from "./state.ts";
import { qualified, quoteIdent, ROW_COLUMN, type WriteStatement } from "./write-statement.ts";

/** The captured change of one statement. */
export interface CapturedChange {
  /** Rows the statement changed (PostgreSQL's command count). */
  rowCount: number;
  rows: RowImage[];
  /** Primary-key columns of the target, in key order (empty: none). */
  primaryKey: string[];
  /** True when every UPDATE row has its before-image (always true for INSERT and DELETE with a key). */
  paired: boolean;
  /** Why rows are not paired, when they are not. */
  note?: string;
}

/** Primary-key columns of `table`, in key order (empty when it has none). */
export async function primaryKeyOf(c: pg.PoolClient, table: QualifiedTable): Promise<string[]> {
  const r = await c.query<{ attname: string }>(
    `SELECT a.attname FROM pg_catalog.pg_index i
       JOIN pg_catalog.pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = ANY (i.indkey)
      WHERE i.indrelid = pg_catalog.to_regclass($1) AND i.indisprimary
      ORDER BY pg_catalog.array_position(i.indkey::int2[], a.attnum)`,
    [qualified(table)],
  );
  return r.rows.map((x) => x.attname);
}

/** Columns of `table` a restore may write (not dropped, not generated), in table order. */
export async function writableColumnsOf(c: pg.PoolClient, table: QualifiedTable): Promise<string[]> {
  const r = await c.query<{ attname: string }>(
    `SELECT attname FROM pg_catalog.pg_attribute
      WHERE attrelid = pg_catalog.to_regclass($1) AND attnum > 0 AND NOT attisdropped AND attgenerated = ''
      ORDER BY attnum`,
    [qualified(table)],
  );
  return r.rows.map((x) => x.attname);
}

/** The key of a row image: its primary-key values as JSON (stable across before and after). */
export function keyOf(image: string, primaryKey: readonly string[]): string {
  const row = JSON.parse(image) as Record<string, unknown>;
  return JSON.stringify(primaryKey.map((k) => row[k] ?? null));
}

/** Columns an UPDATE assigns (its SET list), from the parse tree. */
function assignedColumns(sql: string): string[] {
  const tree = parseSync(sql) as unknown as {
    stmts: { stmt: { UpdateStmt?: { targetList?: { ResTarget: { name: string } }[] } } }[];
  };
  return (tree.stmts[0]?.stmt.UpdateStmt?.targetList ?? []).map((t) => t.ResTarget.name);
}

async function images(c: pg.PoolClient, stmt: WriteStatement, params: readonly SqlParam[]) {
  const r = await c.query<Record<string, string>>(stmt.imagesSql, params as unknown[]);
  return { rowCount: r.rowCount ?? r.rows.length, rows: r.rows.map((x) => x[ROW_COLUMN] as string) };
}

/**
 * Runs `stmt` in the caller's transaction and returns what it changed.
 * @throws the driver's error when the statement fails (the caller maps it).
 */
export async function captureChange(
  c: pg.PoolClient,
  stmt: WriteStatement,
  originalSql: string,
  params: readonly SqlParam[],
): Promise<CapturedChange> {
  const primaryKey = await primaryKeyOf(c, stmt.target);
  if (stmt.kind === "insert") {
    const r = await images(c, stmt, params);
    const rows = r.rows.map((after) => ({ before: null, after }));
    if (stmt.upsert) {
      return {
        rowCount: r.rowCount,
        rows,
        primaryKey,
        paired: false,
        note: "INSERT … ON CONFLICT may update rows whose before-image is not captured",
      };
    }
    return {
      rowCount: r.rowCount,
      rows,
      primaryKey,
      paired: primaryKey.length > 0,
      ...(primaryKey.length > 0 ? {} : { note: `${stmt.target.table} has no primary key` }),
    };
  }
  if (stmt.kind === "delete") {
    const r = await images(c, stmt, params);
    return {
      rowCount: r.rowCount,
      rows: r.rows.map((before) => ({ before, after: null })),
      primaryKey,
      paired: primaryKey.length > 0,
      ...(primaryKey.length > 0 ? {} : { note: `${stmt.target.table} has no primary key` }),
    };
  }
  const changesKey = assignedColumns(originalSql).some((col) => primaryKey.includes(col));
  if (primaryKey.length === 0 || changesKey) {
    const r = await images(c, stmt, params);
    return {
      rowCount: r.rowCount,
      rows: r.rows.map((after) => ({ before: null, after })),
      primaryKey,
      paired: false,
      note:
        primaryKey.length === 0
          ? `${stmt.target.table} has no primary key`
          : "the statement assigns a primary-key column",
    };
  }
  await c.query("SAVEPOINT gatehouse_images");
  const probe = await images(c, stmt, params);
  await c.query("ROLLBACK TO SAVEPOINT gatehouse_images");
  const keys = primaryKey.map(quoteIdent).join(", ");
  const rowsJson = `[${probe.rows.join(",")}]`;
  const before = await c.query<{ r: string }>(
    `SELECT to_jsonb(t.*)::text AS r FROM ${qualified(stmt.target)} AS t
      WHERE (${primaryKey.map((k) => `t.${quoteIdent(k)}`).join(", ")}) IN
            (SELECT ${keys} FROM jsonb_populate_recordset(NULL::${qualified(stmt.target)}, $1::jsonb))
      FOR UPDATE OF t`,
    [rowsJson],
  );
  const beforeByKey = new Map(before.rows.map((x) => [keyOf(x.r, primaryKey), x.r]));
  const r = await images(c, stmt, params);
  const rows = r.rows.map((after) => ({ before: beforeByKey.get(keyOf(after, primaryKey)) ?? null, after }));
  const paired = rows.every((x) => x.before !== null);
  return {
    rowCount: r.rowCount,
    rows,
    primaryKey,
    paired,
    ...(paired ? {} : { note: "some rows changed between the two runs of the statement" }),
  };
}
