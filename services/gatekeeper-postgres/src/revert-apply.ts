/**
 * Applying a revert: each row goes back to its before-image, but only if it still holds exactly
 * what the reverted write left (its after-image, compared as jsonb); otherwise nothing is changed
 * and the apply fails naming the rows (by primary key) that changed since.
 *
 * - inserted row (before null): deleted;
 * - updated row: its writable columns set back from the before-image (`jsonb_populate_record`);
 * - deleted row (after null): inserted again from its before-image (fails if its key exists again).
 */
import type pg from "pg";
import type { OpenedResource } from "./binding.ts";
import { NotRevertable } from "./errors.ts";
import { keyOf, writableColumnsOf } from "./row-images.ts";
import type { AppliedResult, RevertPayload } from "./state.ts";
import { qualified, quoteIdent } from "./write-statement.ts";

/** Most rows named in a "changed since" failure. */
const MAX_NAMED_ROWS = 20;

/** Restores `p.rows` in the caller's transaction. @throws NotRevertable naming rows changed since. */
export async function applyRevert(
  c: pg.PoolClient,
  opened: OpenedResource,
  p: RevertPayload,
): Promise<AppliedResult> {
  void opened;
  const table = qualified(p.target);
  const rowType = `NULL::${table}`;
  const keyMatch = p.primaryKey.map((k) => `t.${quoteIdent(k)} = r.${quoteIdent(k)}`).join(" AND ");
  const changed: string[] = [];
  for (const row of p.rows) {
    const probe = (row.after ?? row.before) as string;
    const cur = await c.query<{ cur: string }>(
      `SELECT to_jsonb(t.*)::text AS cur FROM ${table} AS t, jsonb_populate_record(${rowType}, $1::jsonb) AS r
        WHERE ${keyMatch} FOR UPDATE OF t`,
      [probe],
    );
    const now = cur.rows[0]?.cur;
    const same =
      row.after === null
        ? now === undefined
        : now !== undefined &&
          (await c.query<{ eq: boolean }>("SELECT $1::jsonb = $2::jsonb AS eq", [now, row.after])).rows[0]
            ?.eq === true;
    if (!same) changed.push(keyOf(probe, p.primaryKey));
  }
  if (changed.length > 0) {
    throw new NotRevertable(
      `${changed.length} row(s) of ${p.target.schema}.${p.target.table} changed since action ${p.revertsAction} was applied, so nothing was reverted; rows (primary key ${p.primaryKey.join(", ")}): ${changed.slice(0, MAX_NAMED_ROWS).join(", ")}${changed.length > MAX_NAMED_ROWS ? ", …" : ""}`,
    );
  }
  const cols = await writableColumnsOf(c, p.target);
  const colList = cols.map(quoteIdent).join(", ");
  const fromImage = cols.map((k) => `r.${quoteIdent(k)}`).join(", ");
  for (const row of p.rows) {
    if (row.before === null) {
      await c.query(
        `DELETE FROM ${table} AS t USING jsonb_populate_record(${rowType}, $1::jsonb) AS r WHERE ${keyMatch}`,
        [row.after],
      );
    } else if (row.after === null) {
      await c.query(
        `INSERT INTO ${table} (${colList}) OVERRIDING SYSTEM VALUE SELECT ${fromImage} FROM jsonb_populate_record(${rowType}, $1::jsonb) AS r`,
        [row.before],
      );
    } else {
      await c.query(
        `UPDATE ${table} AS t SET (${colList}) = (SELECT ${fromImage}) FROM jsonb_populate_record(${rowType}, $1::jsonb) AS r WHERE ${keyMatch}`,
        [row.before],
      );
    }
  }
  return { rowCount: p.rows.length, notRevertable: "a revert is not itself reverted automatically" };
}
