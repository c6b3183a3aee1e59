/**
 * The review page's fields of a SQL write's description: a one-line `summary` ("UPDATE orders
 * (3 rows)"), key `fields` (table, statement kind, row count, the row's key when one row
 * changes), `risks`, `preflightWarnings` and a `preview` of the statement. Built from the staged
 * statement (parsed with libpg_query, the server's own parser) and the change the gatekeeper
 * already simulated in a rolled-back transaction; nothing here reads the database.
 *
 * Risks: `destructive` for every DELETE, an UPDATE without WHERE, and an UPDATE changing more than
 * MANY_ROWS rows; `irreversible` when before-images could not all be captured; `content` from
 * gatekeeper-kit's contentRisks over the string values the statement writes (its string literals
 * and string parameters) or, for a schema change, over the statement itself.
 */
import { contentRisks, oneLine, type ScannedText } from "@gatehouse/gatekeeper-kit";
import { graphemes } from "@gatehouse/gateway-contract/invisible";
import type { ActionDescription, ActionField, ActionRisk } from "@gatehouse/proto";
import { parseSync } from "libpg-query";
import type { CapturedChange } from "./row-images.ts";
import type { WritePayload } from "./state.ts";

/** The description fields the review page shows first. */
export type ReviewParts = Pick<
  ActionDescription,
  "summary" | "fields" | "risks" | "preflightWarnings" | "preview"
>;

/** An UPDATE changing more rows than this is flagged destructive. */
export const MANY_ROWS = 10;
const FIELD_CHARS = 200;

/** The first ≤3 lines / 300 grapheme clusters of `text`. */
export function previewOf(text: string): string {
  const lines = text.trim().split("\n").slice(0, 3).join("\n");
  const chars = graphemes(lines);
  return chars.length > 300 ? `${chars.slice(0, 299).join("")}…` : lines;
}

type Json = Record<string, unknown>;

/** What the parse tree says about a write: WHERE present, string constants it writes. */
interface StatementFacts {
  hasWhere: boolean;
  /** String literals of the written values (INSERT's values/SELECT, UPDATE's SET list). */
  strings: string[];
}

function stringConstants(node: unknown, out: string[]): void {
  if (Array.isArray(node)) {
    for (const x of node) stringConstants(x, out);
    return;
  }
  if (node === null || typeof node !== "object") return;
  for (const [k, v] of Object.entries(node as Json)) {
    const sval = k === "A_Const" ? ((v as Json).sval as Json | undefined)?.sval : undefined;
    if (typeof sval === "string") out.push(sval);
    else stringConstants(v, out);
  }
}

/** Facts of a single INSERT/UPDATE/DELETE. @throws Error from the parser on invalid SQL. */
function factsOf(sql: string): StatementFacts {
  const tree = parseSync(sql) as unknown as { stmts: { stmt: Json }[] };
  const wrapper = tree.stmts[0]?.stmt ?? {};
  const node = (Object.values(wrapper)[0] ?? {}) as Json;
  const strings: string[] = [];
  stringConstants(node.targetList, strings); // UPDATE … SET
  stringConstants(node.selectStmt, strings); // INSERT … VALUES / SELECT
  return { hasWhere: node.whereClause !== undefined, strings };
}

/** `col=value, …` of the one changed row's primary key, or undefined. */
function rowKey(change: CapturedChange): string | undefined {
  if (change.rows.length !== 1 || change.primaryKey.length === 0) return undefined;
  const image = change.rows[0]!.after ?? change.rows[0]!.before;
  if (!image) return undefined;
  const row = JSON.parse(image) as Json;
  return change.primaryKey.map((k) => `${k}=${JSON.stringify(row[k] ?? null)}`).join(", ");
}

const rows = (n: number) => `${n} ${n === 1 ? "row" : "rows"}`;

/**
 * The review fields of a write.
 * @param table how the target reads, e.g. "orders" or "audit.events".
 * @param change the simulated change (undefined for DDL, which is not simulated row by row).
 */
export function writeReview(
  payload: Pick<WritePayload, "sql" | "params" | "statementKind">,
  table: string,
  change: CapturedChange | undefined,
): ReviewParts {
  const kind = payload.statementKind;
  const preview = previewOf(payload.sql);
  if (kind === "ddl" || kind === "select" || !change) {
    return {
      summary: oneLine(`schema change: ${payload.sql.trim()}`, FIELD_CHARS),
      fields: [field("statement", "DDL"), field("target", table)],
      risks: [
        { kind: "irreversible", reason: "schema changes are not reverted automatically" },
        ...contentRisks([{ name: "statement", text: payload.sql }]),
      ],
      preflightWarnings: [],
      preview,
    };
  }
  const facts = factsOf(payload.sql);
  const verb = { insert: "INSERT INTO", update: "UPDATE", delete: "DELETE FROM" }[kind];
  const n = change.rowCount;
  const key = rowKey(change);
  const fields: ActionField[] = [
    field("table", table),
    field("statement", kind.toUpperCase()),
    field("rows", String(n)),
    ...(key ? [field("key", key)] : []),
  ];
  const risks: ActionRisk[] = [];
  if (kind === "delete")
    risks.push({ kind: "destructive", reason: `deletes ${rows(n)} from ${oneLine(table, FIELD_CHARS)}` });
  else if (kind === "update" && !facts.hasWhere)
    risks.push({
      kind: "destructive",
      reason: `updates every row of ${oneLine(table, FIELD_CHARS)} (no WHERE): ${rows(n)} now`,
    });
  else if (kind === "update" && n > MANY_ROWS)
    risks.push({ kind: "destructive", reason: `overwrites ${rows(n)} of ${oneLine(table, FIELD_CHARS)}` });
  if (change.note)
    risks.push({
      kind: "irreversible",
      reason: `not all before-images captured (${oneLine(change.note, 120)})`,
    });
  const texts: ScannedText[] = [];
  if (kind !== "delete") {
    facts.strings.forEach((s, i) => {
      texts.push({ name: `string literal ${i + 1}`, text: s });
    });
    payload.params.forEach((p, i) => {
      if (typeof p === "string") texts.push({ name: `parameter $${i + 1}`, text: p });
    });
  }
  risks.push(...contentRisks(texts));
  const preflightWarnings =
    n === 0 ? ["the statement matches 0 rows now: as things stand, approving it changes nothing"] : [];
  return {
    summary: oneLine(`${verb} ${table} (${rows(n)})`, FIELD_CHARS),
    fields,
    risks,
    preflightWarnings,
    preview,
  };
}

function field(name: string, value: string): ActionField {
  return { name, value: oneLine(value, FIELD_CHARS) };
}

/**
 * The review fields of a revert that restores `inverse` (each row's image now → image to restore).
 * Destructive when it deletes rows (the reverted action inserted them).
 */
export function revertReview(
  actionId: string,
  table: string,
  inverse: readonly { before: string | null; after: string | null }[],
  primaryKey: string[],
): ReviewParts {
  const n = inverse.length;
  const deleted = inverse.filter((r) => r.after === null).length;
  const key = rowKey({ rowCount: n, rows: [...inverse], primaryKey, paired: true });
  return {
    summary: oneLine(`revert action ${actionId}: restore ${rows(n)} of ${table}`, FIELD_CHARS),
    fields: [
      field("table", table),
      field("statement", "REVERT"),
      field("rows", String(n)),
      ...(key ? [field("key", key)] : []),
    ],
    risks:
      deleted > 0
        ? [
            {
              kind: "destructive",
              reason: `deletes ${rows(deleted)} the reverted action inserted into ${oneLine(table, FIELD_CHARS)}`,
            },
          ]
        : [],
    preflightWarnings: [],
    preview: "",
  };
}
