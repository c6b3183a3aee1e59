/**
 * Running statements for a binding: transactions with the binding's settings, the replay of
 * pending writes that simulates them, and PostgreSQL errors mapped to the gatekeeper's errors.
 *
 * Every transaction sets, LOCAL to it: `statement_timeout` (the registry's `statementTimeoutMs`)
 * and `search_path` (the scope's default schema, the same one the scope check resolved unqualified
 * names against, so the parser's view and the server's agree).
 */
import type pg from "pg";
import {
  DatabaseUnavailable,
  GatekeeperError,
  QueryFailed,
  SqlSyntaxError,
  StatementTimeout,
} from "./errors.ts";
import { quoteIdent } from "./write-statement.ts";

/** Settings of one binding's transactions. */
export interface TxSettings {
  /** Schema unqualified names resolve to; undefined → only pg_catalog (unqualified names were refused). */
  searchPath: string | undefined;
  statementTimeoutMs: number;
}

/** A pending write as replayed: its provisional id, statement and parameters. */
export interface ReplayedWrite {
  localId: string;
  sql: string;
  params: unknown[];
}

/** A pending write that no longer applies to the database as it is now (left out of the simulation). */
export interface SkippedWrite {
  id: string;
  /** PostgreSQL's error, e.g. `23505 duplicate key value violates unique constraint "t_pkey"`. */
  error: string;
}

/** Type OIDs returned as PostgreSQL's text (dates and times, intervals, bytea): exact, and JSON-safe. */
const TEXT_TYPES = new Set([1082, 1083, 1114, 1184, 1186, 1266, 17]);

/** Type parsers for gatekeeper queries: text for TEXT_TYPES, pg's defaults otherwise (int8/numeric stay strings). */
export function typeParsers(types: typeof pg.types): pg.CustomTypesConfig {
  return {
    getTypeParser: ((oid: number, format?: string) =>
      TEXT_TYPES.has(oid)
        ? (v: string) => v
        : types.getTypeParser(oid, format as "text")) as pg.CustomTypesConfig["getTypeParser"],
  };
}

/** True when the error means the connection is gone (the client must be discarded). */
export function isConnectionError(e: unknown): boolean {
  const err = e as { code?: string; message?: string };
  if (typeof err?.code === "string" && (/^08/.test(err.code) || /^57P0[1-3]$/.test(err.code))) return true;
  if (typeof err?.code === "string" && /^E[A-Z]+$/.test(err.code)) return true; // ECONNRESET, ECONNREFUSED, ...
  return /Connection terminated|connection is closed|Client has encountered a connection error/i.test(
    err?.message ?? "",
  );
}

/**
 * Maps an error from the driver to a gatekeeper error. `what` names the statement's role in
 * messages ("the query", "pending write ~2"). Gatekeeper errors pass through.
 */
export function mapPgError(e: unknown, what: string, timeoutMs: number): Error {
  if (e instanceof GatekeeperError) return e;
  const err = e as { code?: string; message?: string; position?: string };
  if (isConnectionError(e)) {
    return new DatabaseUnavailable(
      `the connection to the database was lost while running ${what} (${err.message ?? "error"}); nothing of it was returned`,
    );
  }
  if (err.code === "57014") {
    return new StatementTimeout(
      `${what} ran longer than the statement timeout (${timeoutMs} ms) and was cancelled by the server; narrow it or add an index`,
    );
  }
  const at = err.position ? ` at position ${err.position}` : "";
  if (err.code === "42601") return new SqlSyntaxError(`${err.message}${at}`);
  if (typeof err.code === "string") return new QueryFailed(`${what} failed: ${err.code} ${err.message}${at}`);
  return e as Error; // not from the database: a bug, reported as such by the kit
}

/**
 * How far a transaction got when it failed, which decides an apply's outcome (apply.ts):
 * - `connect`: checking out or opening the connection (TCP, TLS, login); no statement was sent;
 * - `statements`: BEGIN, the settings and `fn`'s statements; COMMIT was not sent, so nothing of
 *   the transaction can ever commit (the server rolls back an open transaction when its
 *   connection ends);
 * - `commit`: COMMIT was handed to the connection; the server may have committed.
 */
export type TxPhase = "connect" | "statements" | "commit";

/** What `inTransaction` knew about an error it threw: the phase and the driver's own error. */
export interface TxFailure {
  phase: TxPhase;
  /** The error as the driver or the pool raised it (its `code`, `message`), before mapping. */
  raw: unknown;
  /** True when the transaction's `deadline` passed and the connection was destroyed for it. */
  timedOut: boolean;
}

const failures = new WeakMap<object, TxFailure>();

/** The phase and raw error of an error `inTransaction` threw; undefined for any other value. */
export function txFailureOf(e: unknown): TxFailure | undefined {
  return typeof e === "object" && e !== null ? failures.get(e) : undefined;
}

/** `e` (a mapped error) remembered with its failure; returns `e`. */
function withFailure<E>(e: E, failure: TxFailure): E {
  if (typeof e === "object" && e !== null) failures.set(e, failure);
  return e;
}

/** Ends a client's connection at once, failing its query in flight ("Connection terminated"). */
function destroyConnection(client: pg.PoolClient): void {
  client.connection.stream.destroy();
}

/**
 * Checks out a client, runs `fn` in a transaction with `settings`, and ends it: ROLLBACK unless
 * `commit` (a simulation never commits). A client whose connection broke is discarded, not reused.
 *
 * With `deadline` (epoch ms): a checkout still waiting then fails as a connect timeout, and a
 * statement or COMMIT still waiting for its answer then has its connection destroyed (the server
 * is not waited for: a stalled network would hold the apply to its caller's maximum).
 *
 * @throws the mapped error of whatever failed (`what` names the statement); `txFailureOf(err)`
 *   tells the phase it failed in, the driver's own error and whether the deadline passed.
 */
export async function inTransaction<T>(
  pool: pg.Pool,
  settings: TxSettings,
  mode: { readOnly: boolean; commit: boolean; what: string; deadline?: number },
  fn: (c: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const deadline = mode.deadline ?? Infinity;
  let phase: TxPhase = "connect";
  let timedOut = false;
  let client: pg.PoolClient;
  try {
    client = await withDeadline(pool.connect(), deadline, (late) => late.release(true));
  } catch (e) {
    timedOut = e instanceof DeadlinePassed;
    throw withFailure(mapPgError(e, mode.what, settings.statementTimeoutMs), { phase, raw: e, timedOut });
  }
  let broken: Error | undefined;
  // A connection that dies while checked out emits `error` on the client (e.g. ECONNRESET on a
  // later write); without a listener that would be an uncaught exception and end the process.
  const onError = (e: Error) => {
    broken ??= e;
  };
  client.on("error", onError);
  const timer = Number.isFinite(deadline)
    ? setTimeout(
        () => {
          timedOut = true;
          destroyConnection(client);
        },
        Math.max(0, deadline - Date.now()),
      )
    : undefined;
  try {
    phase = "statements";
    await client.query(mode.readOnly ? "BEGIN READ ONLY" : "BEGIN");
    await client.query(
      "SELECT set_config('statement_timeout', $1, true), set_config('search_path', $2, true)",
      [
        String(settings.statementTimeoutMs),
        settings.searchPath ? quoteIdent(settings.searchPath) : "pg_catalog",
      ],
    );
    const out = await fn(client);
    if (mode.commit) phase = "commit";
    await client.query(mode.commit ? "COMMIT" : "ROLLBACK");
    return out;
  } catch (e) {
    if (isConnectionError(e) || timedOut) broken = e as Error;
    else if (phase !== "commit") await client.query("ROLLBACK").catch((r: unknown) => (broken = r as Error));
    throw withFailure(mapPgError(e, mode.what, settings.statementTimeoutMs), { phase, raw: e, timedOut });
  } finally {
    clearTimeout(timer);
    // A broken client is destroyed and keeps its listener; a healthy one goes back to the pool without it.
    if (!broken && !timedOut) client.off("error", onError);
    client.release(broken ?? (timedOut ? new Error("destroyed at the apply's deadline") : undefined));
  }
}

/** The rejection of `withDeadline` when the deadline came first. */
class DeadlinePassed extends Error {
  override name = "DeadlinePassed";
}

/**
 * `p`, or a rejection with DeadlinePassed at `deadline` (epoch ms); a value `p` resolves with
 * after that goes to `late` (e.g. a late client back to the pool).
 */
export function withDeadline<T>(p: Promise<T>, deadline: number, late: (v: T) => void): Promise<T> {
  if (!Number.isFinite(deadline)) return p;
  return new Promise<T>((resolve, reject) => {
    let done = false;
    const timer = setTimeout(
      () => {
        done = true;
        reject(new DeadlinePassed("the apply's deadline passed"));
      },
      Math.max(0, deadline - Date.now()),
    );
    p.then(
      (v) => {
        clearTimeout(timer);
        if (done) late(v);
        else resolve(v);
      },
      (e: unknown) => {
        clearTimeout(timer);
        if (!done) reject(e);
      },
    );
  });
}

/**
 * Replays pending writes in submission order inside the caller's transaction, each under a
 * savepoint: a write that no longer applies (its row is gone, a constraint now fails) is rolled
 * back alone and reported, and the ones after it still run.
 * @returns the writes left out, with PostgreSQL's error. @throws DatabaseUnavailable when the connection breaks.
 */
export async function replayPending(
  c: pg.PoolClient,
  writes: readonly ReplayedWrite[],
): Promise<SkippedWrite[]> {
  const skipped: SkippedWrite[] = [];
  for (const w of writes) {
    await c.query("SAVEPOINT gatehouse_replay");
    try {
      await c.query(w.sql, w.params);
      await c.query("RELEASE SAVEPOINT gatehouse_replay");
    } catch (e) {
      if (isConnectionError(e)) throw e;
      const err = e as { code?: string; message?: string };
      if (err.code === "57014") throw e;
      await c.query("ROLLBACK TO SAVEPOINT gatehouse_replay");
      skipped.push({ id: w.localId, error: `${err.code ?? ""} ${err.message ?? String(e)}`.trim() });
    }
  }
  return skipped;
}
