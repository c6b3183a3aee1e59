/**
 * `execute`: an INSERT, UPDATE or DELETE (DDL only when the registry's `allowDdl` admits it),
 * submitted as an action with delivery `simulate`. Before submission the statement runs in a
 * transaction that replays the binding's pending writes and is rolled back: the approver's
 * description carries the statement, its parameters and the rows it changes (count, and
 * before/after of each changed row, bounded), and the agent gets the affected-row count and its
 * provisional id at once. The write joins the binding's overlay, so later reads include it.
 *
 * Dependencies: a write depends on the latest pending write to each table it touches (reads or
 * changes), so rejecting a write drops every later write built on its rows.
 */
import { buildDescription, inlineSafe, oneLine } from "@gatehouse/gatekeeper-kit";
import { type ActionDescription, Delivery } from "@gatehouse/proto";
import type pg from "pg";
import type { Binding } from "./binding.ts";
import { checkSql } from "./binding.ts";
import { inTransaction, replayPending } from "./db.ts";
import { InvalidRequest, QueryFailed } from "./errors.ts";
import type { Limits } from "./limits.ts";
import type { QualifiedTable } from "./resource-url.ts";
import { writeReview } from "./review.ts";
import { type CapturedChange, captureChange } from "./row-images.ts";
import type { PendingSqlWrite, RowImage, SqlParam, WritePayload } from "./state.ts";
import { analyseWrite, qualified } from "./write-statement.ts";

/** What `execute` returns. */
export interface ExecuteResult {
  /** Provisional id, e.g. "~1". */
  id: string;
  pending: true;
  /** Rows the statement changes in the simulation (what the approver sees). */
  rowCount: number;
}

/** Renders row images as `before → after` lines for an approver, bounded. */
export function describeRows(
  rows: readonly RowImage[],
  limits: Pick<Limits, "maxDescribedRows">,
): { text: string; complete: boolean } {
  const shown = rows.slice(0, limits.maxDescribedRows);
  const lines = shown.map((r, i) => {
    if (r.before === null) return `${i + 1}. + ${r.after}`;
    if (r.after === null) return `${i + 1}. - ${r.before}`;
    return `${i + 1}. before: ${r.before}\n   after:  ${r.after}`;
  });
  const complete = shown.length === rows.length;
  if (!complete) lines.push(`… ${rows.length - shown.length} more row(s) not shown`);
  return { text: lines.join("\n") || "(no rows)", complete };
}

/**
 * The approver's description of a write: headline, statement, parameters, changed rows.
 * `label` is plain text (`oneLine`); the headline is escaped for Markdown here.
 */
export function describeWrite(
  label: string,
  payload: Pick<WritePayload, "sql" | "params" | "statementKind" | "target">,
  change: CapturedChange | undefined,
  limits: Pick<Limits, "maxDescribedRows" | "maxDescribedBytes">,
): { description: string; complete: boolean } {
  const table = payload.target ? `${payload.target.schema}.${payload.target.table}` : "";
  const verb = {
    insert: "Insert into",
    update: "Update",
    delete: "Delete from",
    ddl: "Change the schema of",
    select: "Read",
  }[payload.statementKind];
  const headline = inlineSafe(
    change
      ? `${verb} ${oneLine(table)} on ${label}: ${change.rowCount} row(s) change.`
      : `${verb} ${label} (DDL).`,
    400,
  );
  const details: string[] = [];
  if (change?.note)
    details.push(
      `Before-images: not all captured (${inlineSafe(change.note, 200)}); this write cannot be reverted automatically.`,
    );
  details.push("Applied exactly once, only if it still changes the same number of rows.");
  const rows = change ? describeRows(change.rows, limits) : undefined;
  const d = buildDescription({
    headline,
    details,
    blocks: [
      { label: "Statement (untrusted):", text: payload.sql, lang: "sql", maxBytes: 8192 },
      {
        label: "Parameters (untrusted):",
        text: JSON.stringify(payload.params),
        lang: "json",
        maxBytes: 4096,
      },
      ...(rows
        ? [
            {
              label: "Changed rows (simulated now; - removed, + added, before/after changed):",
              text: rows.text,
              lang: "text",
              maxBytes: limits.maxDescribedBytes,
            },
          ]
        : []),
    ],
  });
  return { description: d.description, complete: d.descriptionIsComplete && (rows?.complete ?? true) };
}

/**
 * Tables linked to `target` by a foreign key, either way: a row inserted into `orders` may need a
 * pending `customers` row, a deleted `customers` row may cascade into `orders`.
 */
async function foreignKeyNeighbours(c: pg.PoolClient, target: QualifiedTable): Promise<QualifiedTable[]> {
  const r = await c.query<{ schema: string; table: string }>(
    `SELECT n.nspname AS schema, t.relname AS table
       FROM pg_catalog.pg_constraint k
       JOIN pg_catalog.pg_class t
         ON t.oid = CASE WHEN k.conrelid = pg_catalog.to_regclass($1) THEN k.confrelid ELSE k.conrelid END
       JOIN pg_catalog.pg_namespace n ON n.oid = t.relnamespace
      WHERE k.contype = 'f' AND pg_catalog.to_regclass($1) IN (k.conrelid, k.confrelid)`,
    [qualified(target)],
  );
  return r.rows;
}

/** The latest pending write to each table this statement touches. */
function dependencies(
  b: Binding,
  relations: readonly { schema: string; table: string }[],
  ddl: boolean,
): string[] {
  const pending = b.state.overlay.pending();
  if (ddl) return pending.length > 0 ? [pending[pending.length - 1]!.localId] : [];
  const deps = new Set<string>();
  for (const r of relations) {
    for (let i = pending.length - 1; i >= 0; i--) {
      const t = pending[i]!.write.target;
      if (pending[i]!.write.statementKind === "ddl" || (t && t.schema === r.schema && t.table === r.table)) {
        deps.add(pending[i]!.localId);
        break;
      }
    }
  }
  return [...deps];
}

/** How a target reads in a summary: unqualified when in the binding's default schema. */
function shownTable(target: QualifiedTable | undefined, defaultSchema: string, label: string): string {
  if (!target) return label;
  return target.schema === defaultSchema ? target.table : `${target.schema}.${target.table}`;
}

/** Simulates a write and submits it for approval. */
export async function execute(b: Binding, args?: unknown): Promise<ExecuteResult> {
  const { sql, params } = b.statementArgs(args, "execute");
  const decision = checkSql(b.opened, sql, "write");
  if (b.state.overlay.size >= b.limits.maxPendingWrites) {
    throw new InvalidRequest(
      `this binding already has ${b.limits.maxPendingWrites} pending writes (each is replayed before every read); wait for approvals first`,
    );
  }
  const ddl = decision.kind === "ddl";
  const stmt = ddl ? undefined : analyseWrite(sql, b.settings.searchPath ?? "public");
  const pending = b.state.overlay
    .pending()
    .map((p) => ({ localId: p.localId, sql: p.write.sql, params: p.write.params }));
  const pool = await b.pool("write");
  type Simulated = CapturedChange & { neighbours: QualifiedTable[] };
  const change = await inTransaction<Simulated | undefined>(
    pool,
    b.settings,
    { readOnly: false, commit: false, what: "the statement" },
    async (c) => {
      await replayPending(c, pending);
      if (!stmt) {
        await c.query(sql, params as unknown[]);
        return undefined;
      }
      const captured = await captureChange(c, stmt, sql, params as SqlParam[]);
      return { ...captured, neighbours: await foreignKeyNeighbours(c, stmt.target) };
    },
  );
  if (change && change.rowCount > b.limits.maxChangedRows) {
    throw new QueryFailed(
      `the statement changes ${change.rowCount} rows; one write may change at most ${b.limits.maxChangedRows} (narrow its WHERE clause)`,
    );
  }
  const payload: WritePayload = {
    kind: "write",
    sql,
    params: params as SqlParam[],
    statementKind: decision.kind,
    ...(stmt ? { target: stmt.target } : {}),
    expectedRowCount: change ? change.rowCount : -1,
  };
  const d = describeWrite(b.label, payload, change, b.limits);
  const dependsOn = dependencies(b, [...decision.relations, ...(change?.neighbours ?? [])], ddl);
  const localId = b.state.ids.next();
  const table = stmt ? `${stmt.target.schema}.${stmt.target.table}` : b.label;
  const desc: ActionDescription = {
    title: `${decision.kind.toUpperCase()} ${oneLine(table, 120)}${change ? ` (${change.rowCount} row(s))` : ""}`,
    description: d.description,
    descriptionIsComplete: d.complete,
    delivery: Delivery.DELIVERY_SIMULATE,
    dependsOn,
    implementsRevert: 0,
    autoApprovable: false,
    actionKind: {
      tag: `postgres.${decision.kind}`,
      label: decision.kind === "ddl" ? "Schema change" : `SQL ${decision.kind}`,
    },
    classifiedBy: "gatekeeper-postgres: execute is a write",
    egress: false,
    ...writeReview(payload, shownTable(stmt?.target, b.settings.searchPath ?? "public", b.label), change),
  };
  await b.approval.submitAction(b.ctx.callerToken, localId, desc, JSON.stringify(payload));
  const write: PendingSqlWrite = { ...payload, localId };
  b.state.overlay.add(localId, write, dependsOn);
  return { id: localId, pending: true, rowCount: change ? change.rowCount : 0 };
}
