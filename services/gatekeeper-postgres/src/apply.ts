/**
 * ApplyAction for PostgreSQL: exactly once per action, by a marker row committed in the same
 * transaction as the write. The apply transaction (write role, READ COMMITTED):
 *
 * 1. looks up the marker `gatehouse.applied_actions (workspace_id, action_id)`: present → the
 *    write committed before (e.g. the gatekeeper died between commit and reply); nothing is run
 *    and the stored result is returned as applied;
 * 2. re-checks the statement against the binding's scope (the payload is not trusted blindly);
 * 3. runs the write, capturing the before-images of every changed row (row-images.ts);
 * 4. if the affected-row count differs from the one the approver saw, rolls back and fails with
 *    both counts — it never changes something other than what was approved;
 * 5. inserts the marker with the result (row count, before/after images for a revert) and commits.
 *
 * Two applies of one action racing: the second blocks on the marker's key until the first
 * commits, then fails with a unique violation, re-reads the marker and reports applied.
 *
 * The marker table is created on first use (`CREATE SCHEMA IF NOT EXISTS gatehouse; CREATE TABLE
 * IF NOT EXISTS …`); when the write role may not create it, the error gives the administrator the
 * SQL to run once (MARKER_DDL).
 *
 * Outcomes when the connection fails (apply-faults.ts has the full mapping): before any statement
 * (refused, DNS, TLS, login, connect timeout) → "failed", not sent; broken before COMMIT was sent
 * → "failed", as PostgreSQL rolls the open transaction back; broken or timed out after COMMIT was
 * sent → the marker is read on a new connection: present → applied, else "outcome unknown"
 * (`AnswerLost`). The caller's deadline (less a margin to answer in) bounds every wait: a
 * connection still waiting then is destroyed.
 */
import { AnswerLost, type ApplyContext, NotSent } from "@gatehouse/gatekeeper-kit";
import type { ApplyActionRequest, ApplyActionResponse } from "@gatehouse/proto";
import type pg from "pg";
import type { Logger } from "pino";
import { beforeCommitFault, commitLostFault, connectFault, serverOrigin } from "./apply-faults.ts";
import { checkSql, type OpenedResource, openResource, settingsOf } from "./binding.ts";
import { inTransaction, isConnectionError, txFailureOf, withDeadline } from "./db.ts";
import { DatabaseUnavailable, GatekeeperError, InvalidRequest, QueryFailed } from "./errors.ts";
import type { Pools } from "./pools.ts";
import type { RegistryConfig } from "./registry.ts";
import { applyRevert } from "./revert-apply.ts";
import { captureChange } from "./row-images.ts";
import {
  type AppliedResult,
  dropWrite,
  type PostgresState,
  type StagedPayload,
  type WritePayload,
} from "./state.ts";
import { analyseWrite } from "./write-statement.ts";

/** The marker table, created on first apply. Grant the write role USAGE on the schema and SELECT, INSERT on the table. */
export const MARKER_DDL = `CREATE SCHEMA IF NOT EXISTS gatehouse;
CREATE TABLE IF NOT EXISTS gatehouse.applied_actions (
  workspace_id text NOT NULL,
  action_id bigint NOT NULL,
  binding text NOT NULL,
  applied_at timestamptz NOT NULL DEFAULT now(),
  result text NOT NULL,
  PRIMARY KEY (workspace_id, action_id)
)`;

/** Largest result_json kept (row images for a revert), bytes; past it the images are dropped and the write is not revertable. */
export const MAX_RESULT_BYTES = 512 * 1024;

export interface ApplyDeps {
  registry: RegistryConfig;
  pools: Pools;
  state: PostgresState;
  logger: Logger;
  /** Test hook: runs after the apply transaction committed, before the reply (fault tests). */
  afterCommit?: (actionId: number) => void;
}

/** Parses payload_json as this gatekeeper staged it. @throws InvalidRequest naming payload_json. */
export function parsePayload(json: string): StagedPayload {
  let v: unknown;
  try {
    v = JSON.parse(json);
  } catch {
    throw new InvalidRequest("payload_json is not JSON; it must be the payload gatekeeper-postgres staged");
  }
  const p = v as Record<string, unknown> | null;
  if (
    p &&
    p.kind === "write" &&
    typeof p.sql === "string" &&
    Array.isArray(p.params) &&
    typeof p.expectedRowCount === "number"
  ) {
    return p as unknown as WritePayload;
  }
  if (p && p.kind === "revert" && Array.isArray(p.rows) && Array.isArray(p.primaryKey) && p.target) {
    return p as unknown as StagedPayload;
  }
  throw new InvalidRequest("payload_json must be {kind: write | revert, …} as staged by gatekeeper-postgres");
}

const ensured = new WeakMap<pg.Pool, Promise<void>>();

/** Longest a marker table check or creation may wait for its answer before its connection is destroyed, ms. */
export const MARKER_CHECK_MS = 30_000;

/**
 * `sql` on a connection of `pool` that is destroyed when no answer came within MARKER_CHECK_MS:
 * the check is shared by every apply on the pool, so a stalled connection must not hold it (and
 * the pool's shutdown) forever. @throws the driver's error.
 */
async function markerQuery<R extends pg.QueryResultRow>(
  pool: pg.Pool,
  sql: string,
): Promise<pg.QueryResult<R>> {
  const c = await pool.connect();
  let broken: Error | undefined;
  const onError = (e: Error) => {
    broken ??= e;
  };
  c.on("error", onError);
  const timer = setTimeout(() => {
    broken ??= new Error(`no answer within ${MARKER_CHECK_MS} ms`);
    c.connection.stream.destroy();
  }, MARKER_CHECK_MS);
  try {
    return await c.query<R>(sql);
  } catch (e) {
    if (isConnectionError(e)) broken ??= e as Error;
    throw e;
  } finally {
    clearTimeout(timer);
    if (!broken) c.off("error", onError);
    c.release(broken);
  }
}

/** Creates the marker table once per pool. @throws QueryFailed with MARKER_DDL when the role may not. */
function ensureMarker(pool: pg.Pool): Promise<void> {
  let p = ensured.get(pool);
  if (!p) {
    p = (async () => {
      const exists = await markerQuery<{ t: string | null }>(
        pool,
        "SELECT pg_catalog.to_regclass('gatehouse.applied_actions')::text AS t",
      );
      if (exists.rows[0]?.t) return;
      try {
        await markerQuery(pool, MARKER_DDL);
      } catch (e) {
        const code = (e as { code?: string }).code;
        if (code === "42P06" || code === "42P07" || code === "23505") return; // created concurrently
        throw new QueryFailed(
          `the marker table gatehouse.applied_actions does not exist and the write role cannot create it (${code ?? ""} ${(e as Error).message}); an administrator creates it once with: ${MARKER_DDL.replace(/\s+/g, " ")}; then grants the write role USAGE ON SCHEMA gatehouse and SELECT, INSERT ON gatehouse.applied_actions`,
        );
      }
    })();
    p.catch(() => ensured.delete(pool));
    ensured.set(pool, p);
  }
  return p;
}

async function readMarker(
  c: pg.PoolClient | pg.Pool,
  workspaceId: string,
  actionId: number,
): Promise<string | undefined> {
  const r = await c.query<{ result: string }>(
    "SELECT result FROM gatehouse.applied_actions WHERE workspace_id = $1 AND action_id = $2",
    [workspaceId, actionId],
  );
  return r.rows[0]?.result;
}

/** Runs a staged write; see the module comment. */
async function applyWrite(c: pg.PoolClient, opened: OpenedResource, p: WritePayload): Promise<AppliedResult> {
  const decision = checkSql(opened, p.sql, "write");
  if (decision.kind === "ddl") {
    await c.query(p.sql, p.params as unknown[]);
    return { rowCount: 0, notRevertable: "a schema change is not reverted automatically" };
  }
  const stmt = analyseWrite(p.sql, settingsOf(opened).searchPath ?? "public");
  const change = await captureChange(c, stmt, p.sql, p.params);
  if (change.rowCount !== p.expectedRowCount) {
    throw new QueryFailed(
      `the statement now changes ${change.rowCount} row(s); the approver saw ${p.expectedRowCount}; nothing was changed (the data moved since: run the statement again for a new approval)`,
    );
  }
  const result: AppliedResult = { rowCount: change.rowCount };
  if (!change.paired || change.primaryKey.length === 0) {
    result.notRevertable = change.note ?? "before-images were not captured";
  } else {
    const images = { primaryKey: change.primaryKey, rows: change.rows };
    if (JSON.stringify(images).length > MAX_RESULT_BYTES) {
      result.notRevertable = `the before-images of ${change.rowCount} rows exceed ${MAX_RESULT_BYTES} bytes`;
    } else result.images = images;
  }
  return result;
}

/** Longest wait for the marker after a COMMIT's answer was lost, ms. */
export const RECONCILE_MS = 5000;

/**
 * The moment an apply stops waiting, epoch ms: the caller's deadline less a margin (a tenth of
 * the time left, at most 1 s) so the outcome reaches the caller before it gives up.
 */
function stopAt(deadline: number): number {
  if (!Number.isFinite(deadline)) return Infinity;
  return deadline - Math.min(1000, Math.max(0, (deadline - Date.now()) / 10));
}

/**
 * Applies one staged action exactly once (module comment).
 * @param ctx the caller's deadline (epoch ms, `Infinity` for none), which bounds every wait.
 * @returns ok with result_json (AppliedResult), or not ok with the reason (a refusal, the server's
 *   error, or a write provably not applied); a failed apply drops the write and its dependents
 *   from the overlay.
 * @throws NotSent (no statement sent: the kit records it as failed), AnswerLost (COMMIT sent and
 *   no answer: outcome unknown), or an unexpected error (outcome unknown).
 */
export async function applyAction(
  req: ApplyActionRequest,
  deps: ApplyDeps,
  ctx: ApplyContext = { deadline: Infinity },
): Promise<ApplyActionResponse> {
  const state = deps.state.binding(req.workspaceId, req.binding);
  const until = stopAt(ctx.deadline);
  const actionId = Number(req.actionId);
  const what = `applying action ${actionId}`;
  try {
    const opened = openResource(req.url, deps.registry);
    const payload = parsePayload(req.payloadJson);
    const origin = serverOrigin(opened.server);
    let pool: pg.Pool;
    try {
      pool = await deps.pools.pool(opened.resource.name, opened.server, opened.resource.database, "write");
      await withDeadline(ensureMarker(pool), until, () => {});
    } catch (e) {
      // Before the write's transaction: nothing of it was sent.
      if (e instanceof DatabaseUnavailable)
        throw new NotSent(`${what} at ${origin} was not sent: ${e.message}`);
      if (e instanceof GatekeeperError && !isConnectionError(e)) throw e;
      throw connectFault(what, origin, e);
    }
    const marker = { workspaceId: req.workspaceId, actionId };
    const run = () =>
      inTransaction(
        pool,
        settingsOf(opened),
        { readOnly: false, commit: true, what: `action ${actionId}`, deadline: until },
        async (c) => {
          const done = await readMarker(c, req.workspaceId, actionId);
          if (done !== undefined) return { resultJson: done, already: true };
          const result =
            payload.kind === "write"
              ? await applyWrite(c, opened, payload)
              : await applyRevert(c, opened, payload);
          const resultJson = JSON.stringify(result);
          await c.query(
            "INSERT INTO gatehouse.applied_actions (workspace_id, action_id, binding, result) VALUES ($1, $2, $3, $4)",
            [req.workspaceId, actionId, req.binding, resultJson],
          );
          return { resultJson, already: false };
        },
      );
    let out: { resultJson: string; already: boolean; reconciled?: true };
    try {
      out = await run();
    } catch (e) {
      const f = txFailureOf(e);
      if (f?.phase === "connect") throw connectFault(what, origin, f.raw);
      if (f && (f.timedOut || isConnectionError(f.raw))) {
        if (f.phase === "statements") throw beforeCommitFault(what, origin, f);
        const found = await reconcile(pool, opened, marker, until);
        if (found === undefined) throw commitLostFault(what, origin, f, marker);
        out = { resultJson: found, already: false, reconciled: true };
      } else {
        if (!(e instanceof QueryFailed && /: 23505 /.test(e.message))) throw e;
        // A concurrent apply of the same action committed first: the action is applied.
        const done = await readMarker(pool, req.workspaceId, actionId).catch(() => undefined);
        if (done === undefined) {
          throw new AnswerLost(
            `${what} at ${origin}: another apply of this action committed first and its marker row could not be read, so its result is unknown; check gatehouse.applied_actions for workspace_id '${req.workspaceId}', action_id ${actionId}`,
          );
        }
        out = { resultJson: done, already: true };
      }
    }
    deps.afterCommit?.(actionId);
    state.overlay.settle(req.localId);
    deps.logger.info(
      {
        event: out.reconciled
          ? "apply.reconciled"
          : out.already
            ? "apply.already_applied"
            : "apply.committed",
        actionId,
        binding: req.binding,
      },
      out.reconciled
        ? "the COMMIT's answer was lost; the marker row shows the action applied"
        : out.already
          ? "action was applied before; nothing changed"
          : "action applied",
    );
    return { ok: true, resultJson: out.resultJson, error: "" };
  } catch (e) {
    // NotSent is recorded "failed" by the kit; AnswerLost and anything unexpected "outcome unknown".
    if (!(e instanceof GatekeeperError)) throw e;
    if (e.code === "unavailable") {
      deps.logger.warn({ event: "apply.outcome_unknown", actionId, err: e.message }, "apply outcome unknown");
      throw e;
    }
    const dropped = dropWrite(state, req.localId, "failed to apply");
    deps.logger.warn({ event: "apply.failed", actionId, dropped, err: e.message }, "apply failed");
    if (e instanceof NotSent) throw e;
    return { ok: false, resultJson: "", error: e.message };
  }
}

/**
 * After a COMMIT's answer was lost: the action's marker row, read on a new connection within
 * RECONCILE_MS and before `until`, or undefined when it is absent (the commit may still be under
 * way on the old connection, so absent proves nothing) or cannot be read.
 */
async function reconcile(
  pool: pg.Pool,
  opened: OpenedResource,
  marker: { workspaceId: string; actionId: number },
  until: number,
): Promise<string | undefined> {
  const deadline = Math.min(until, Date.now() + RECONCILE_MS);
  if (deadline - Date.now() < 100) return undefined;
  return inTransaction(
    pool,
    settingsOf(opened),
    { readOnly: true, commit: false, what: "reading the apply marker", deadline },
    (c) => readMarker(c, marker.workspaceId, marker.actionId),
  ).catch(() => undefined);
}
