/**
 * Operator tasks on a store named by URL (what `gatehouse store migrate|copy|verify` run): migrate a
 * schema, open a store that must already exist, tell whether two URLs name the same store, verify every stream.
 */
import { existsSync, realpathSync } from "node:fs";
import { resolve } from "node:path";
import pg from "pg";
import { openEventStore, parseStoreUrl, type StoreTarget } from "./open.ts";
import { type EventStore, InvalidEvent, StoreSchemaMismatch, StoreUnavailable } from "./port.ts";
import { isConnectionError } from "./postgres.ts";
import { migratePostgres, POSTGRES_SCHEMA_VERSION, postgresSchemaVersion } from "./postgres-schema.ts";
import { openSqliteEventStore } from "./sqlite.ts";
import { redactUrl } from "./url.ts";
import { verifyStream } from "./verify.ts";

/** Outcome of {@link migrateStore}. */
export interface MigrateReport {
  backend: StoreTarget["backend"];
  /** The store URL with its password redacted. */
  url: string;
  /** Schema version before and after (PostgreSQL; 0 = no schema); null for backends without a versioned schema. */
  before: number | null;
  after: number | null;
  /** Versions this run applied (empty when the schema was current). */
  applied: number[];
  /** One sentence for people: what was done or why nothing was needed. */
  message: string;
}

/**
 * Brings the store a URL names to this code's schema. PostgreSQL: runs `migratePostgres` (idempotent;
 * safe to run from several processes at once). SQLite: opens the file once, which creates the table when
 * missing (the embedded store migrates itself on every open). KurrentDB: there is no schema; the server is
 * only probed, so an unreachable one still fails.
 * @param options.connectTimeoutMs how long to wait for a PostgreSQL server, ms (default 10 000).
 * @throws InvalidEvent for a URL that is none of the accepted forms (the message lists them).
 * @throws StoreUnavailable naming the URL (password redacted) when the server cannot be reached or the file cannot be opened.
 * @throws StoreSchemaMismatch when the database's schema is newer than this code.
 */
export async function migrateStore(
  url: string,
  options: { connectTimeoutMs?: number } = {},
): Promise<MigrateReport> {
  const target = parseStoreUrl(url);
  const shown = redactUrl(url);
  const base = { backend: target.backend, url: shown, applied: [] as number[] };
  switch (target.backend) {
    case "kurrentdb": {
      // Nothing to migrate, but a migrate run as a pre-flight check must still fail on a dead server:
      // opening the store probes it (StoreUnavailable within KURRENT_OPEN_DEADLINE_MS).
      const store = await openEventStore(url);
      await store.close();
      return {
        ...base,
        before: null,
        after: null,
        message: `${shown}: the KurrentDB server answers; it keeps streams without a schema, so there is nothing to migrate`,
      };
    }
    case "sqlite": {
      if (target.path !== ":memory:") {
        const store = openSqliteFile(target.path, url);
        await store.close();
      }
      return {
        ...base,
        before: null,
        after: null,
        message:
          target.path === ":memory:"
            ? "sqlite::memory: is a private in-memory store: nothing to migrate"
            : `${shown}: the embedded SQLite store creates and upgrades its table itself whenever it opens; the file is ready`,
      };
    }
    case "postgres": {
      const client = new pg.Client({
        connectionString: target.url,
        connectionTimeoutMillis: options.connectTimeoutMs ?? 10_000,
      });
      client.on("error", () => {});
      try {
        await client.connect();
        const before = await postgresSchemaVersion(client);
        const applied = await migratePostgres(client, target.url);
        const after = await postgresSchemaVersion(client);
        return {
          ...base,
          before,
          after,
          applied,
          message:
            applied.length === 0
              ? `${shown}: schema version ${after} is current (this Gatehouse needs ${POSTGRES_SCHEMA_VERSION}); nothing to do`
              : `${shown}: schema version ${before} → ${after} (applied ${applied.join(", ")})`,
        };
      } catch (error) {
        if (error instanceof StoreSchemaMismatch || !isConnectionError(error)) throw error;
        throw new StoreUnavailable(
          `cannot connect to the event store at ${shown}: ${(error as Error).message}`,
        );
      } finally {
        await client.end().catch(() => {});
      }
    }
  }
}

/**
 * Opens the store a URL names, like `openEventStore`, but refuses a SQLite path with no file (opening it
 * would create an empty store: a mistyped source or a verify of nothing).
 * @param options.create true for a copy target: a missing SQLite file is created.
 * @throws InvalidEvent for an unknown URL; StoreUnavailable when the server or file cannot be reached,
 *   or (without `create`) the SQLite file does not exist; StoreSchemaMismatch when PostgreSQL needs migrating.
 */
export async function openStoreAt(url: string, options: { create?: boolean } = {}): Promise<EventStore> {
  const target = parseStoreUrl(url);
  if (target.backend === "sqlite") {
    if (target.path !== ":memory:" && !options.create && !existsSync(target.path))
      throw new StoreUnavailable(`there is no SQLite event store at ${target.path} (no such file)`);
    return openSqliteFile(target.path, url);
  }
  return openEventStore(url);
}

function openSqliteFile(path: string, url: string): EventStore {
  try {
    return openSqliteEventStore(path);
  } catch (error) {
    throw new StoreUnavailable(
      `cannot open the SQLite event store at ${redactUrl(url)}: ${(error as Error).message}`,
    );
  }
}

/**
 * True when two store URLs name the same store: the same SQLite file (paths resolved, symlinks followed)
 * or the same PostgreSQL host, port and database (user, password and parameters aside), or the same KurrentDB host.
 * @throws InvalidEvent for a URL that is none of the accepted forms.
 */
export function sameStore(a: string, b: string): boolean {
  return storeIdentity(a) === storeIdentity(b);
}

function storeIdentity(url: string): string {
  const target = parseStoreUrl(url);
  if (target.backend === "sqlite") {
    if (target.path === ":memory:") return `sqlite-memory:${Math.random()}`;
    const absolute = resolve(target.path);
    return `sqlite:${existsSync(absolute) ? realpathSync(absolute) : absolute}`;
  }
  let parsed: URL;
  try {
    parsed = new URL(target.url);
  } catch {
    throw new InvalidEvent(`event store URL ${redactUrl(url)} is not a valid URL`);
  }
  const port = parsed.port || (target.backend === "postgres" ? "5432" : "2113");
  const database =
    decodeURIComponent(parsed.pathname.replace(/^\//, "")) || decodeURIComponent(parsed.username);
  return `${target.backend}://${parsed.hostname.toLowerCase()}:${port}/${database}`;
}

/** One stream's line in {@link VerifyStoreResult}. */
export interface StreamVerification {
  streamId: string;
  ok: boolean;
  eventsChecked: number;
  /** First bad revision (0-based), or -1 when ok. */
  firstBadRevision: number;
  /** What is wrong there; "" when ok. */
  problem: string;
}

/** Outcome of {@link verifyStore}. */
export interface VerifyStoreResult {
  /** True when every stream verified. */
  ok: boolean;
  streams: number;
  eventsChecked: number;
  /** The streams that failed, in listing order. */
  failed: StreamVerification[];
}

/**
 * Runs {@link verifyStream} on every stream of a store (in `listStreams` order), or on the given ones;
 * one stream at a time, so memory stays bounded by verify's page.
 * @param options.streams verify only these stream ids.
 * @param options.onStream called with each stream's result as it is known.
 * @throws StreamNotFound when a stream given in `streams` has no events; StoreUnavailable from the store.
 */
export async function verifyStore(
  store: EventStore,
  options: { streams?: string[]; onStream?(result: StreamVerification): void } = {},
): Promise<VerifyStoreResult> {
  const result: VerifyStoreResult = { ok: true, streams: 0, eventsChecked: 0, failed: [] };
  for (const streamId of options.streams ?? (await store.listStreams())) {
    const v = await verifyStream(store, streamId);
    const line: StreamVerification = {
      streamId,
      ok: v.ok,
      eventsChecked: v.eventsChecked,
      firstBadRevision: v.firstBadRevision,
      problem: v.problem,
    };
    result.streams += 1;
    result.eventsChecked += v.eventsChecked;
    if (!v.ok) {
      result.ok = false;
      result.failed.push(line);
    }
    options.onStream?.(line);
  }
  return result;
}
