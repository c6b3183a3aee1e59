/**
 * What the gatekeeper needs to know about a write statement that passed the scope check: its
 * target table, and a variant of its text that returns each changed row as PostgreSQL's own JSON
 * of the whole row (`to_jsonb(<target>.*)::text`), so simulations, descriptions, applies and
 * reverts see exact row images without rewriting the statement's logic.
 *
 * The variant is built from the lexer's tokens (libpg_query's scanner, the server's own lexer):
 * the statement's top-level RETURNING clause, if any, is cut at its keyword (parentheses depth 0,
 * so a RETURNING inside a data-modifying CTE stays), a trailing `;` and comments are dropped, and
 * `RETURNING to_jsonb("<ref>".*)::text AS gatehouse_row` is appended on a new line. Token offsets
 * are UTF-8 byte offsets, so the text is cut as bytes.
 */
import { parseSync, scanSync } from "libpg-query";
import type { QualifiedTable } from "./resource-url.ts";

/** Column name of the row image in the variant's result. */
export const ROW_COLUMN = "gatehouse_row";

/** A write statement, analysed. */
export interface WriteStatement {
  kind: "insert" | "update" | "delete";
  /** The table the statement changes, schema resolved (unqualified → `defaultSchema`). */
  target: QualifiedTable;
  /** The statement text returning one `gatehouse_row` (jsonb text of the whole changed row) per row. */
  imagesSql: string;
  /** INSERT … ON CONFLICT: rows it updates come back after-only (their before-image is not captured). */
  upsert: boolean;
}

type Json = Record<string, unknown>;

const KINDS: Record<string, WriteStatement["kind"]> = {
  InsertStmt: "insert",
  UpdateStmt: "update",
  DeleteStmt: "delete",
};

/** Quotes an identifier for SQL (`"` doubled). */
export function quoteIdent(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** `"schema"."table"`. */
export function qualified(t: QualifiedTable): string {
  return `${quoteIdent(t.schema)}.${quoteIdent(t.table)}`;
}

/**
 * Analyses a single INSERT, UPDATE or DELETE that the scope check allowed.
 * @param defaultSchema the schema an unqualified target resolves to (the binding's search_path).
 * @throws Error when `sql` is not one such statement (the scope check should have refused it).
 */
export function analyseWrite(sql: string, defaultSchema: string): WriteStatement {
  const tree = parseSync(sql) as unknown as { stmts: { stmt: Json }[] };
  const wrapper = tree.stmts[0]?.stmt ?? {};
  const type = Object.keys(wrapper)[0] ?? "";
  const kind = KINDS[type];
  if (!kind || tree.stmts.length !== 1) throw new Error("not a single INSERT, UPDATE or DELETE statement");
  const node = wrapper[type] as Json;
  const rel = node.relation as { schemaname?: string; relname: string; alias?: { aliasname: string } };
  const target = { schema: rel.schemaname ?? defaultSchema, table: rel.relname };
  const ref = rel.alias?.aliasname ?? rel.relname;
  const bytes = Buffer.from(sql, "utf8");
  const tokens = scanSync(sql).tokens.filter(
    (t) => t.tokenName !== "SQL_COMMENT" && t.tokenName !== "C_COMMENT",
  );
  let depth = 0;
  let cut = -1;
  let end = 0;
  for (const t of tokens) {
    if (t.text === ";" && depth === 0) break;
    if (t.text === "(") depth++;
    else if (t.text === ")") depth--;
    else if (depth === 0 && t.text.toUpperCase() === "RETURNING") cut = t.start;
    end = t.end;
  }
  const body = bytes.subarray(0, cut >= 0 ? cut : end).toString("utf8");
  return {
    kind,
    target,
    upsert: kind === "insert" && node.onConflictClause !== undefined,
    imagesSql: `${body}\nRETURNING to_jsonb(${quoteIdent(ref)}.*)::text AS ${ROW_COLUMN}`,
  };
}
