import { mkdirSync } from "node:fs";
import { dirname, resolve } from "node:path";
import { z } from "zod";
import { openKurrentEventStore } from "./kurrentdb.ts";
import { type EventStore, InvalidEvent } from "./port.ts";
import { openPostgresEventStore } from "./postgres.ts";
import { openSqliteEventStore } from "./sqlite.ts";
import { redactUrl } from "./url.ts";

/** Which backend a store URL selects, and what it needs. */
export type StoreTarget =
  | { backend: "sqlite"; path: string }
  | { backend: "postgres"; url: string }
  | { backend: "kurrentdb"; url: string };

/**
 * Parses an event-store URL (one URL selects the backend for every service):
 * - `sqlite:<path>` (relative to the working directory) or `sqlite:///abs/path`, `sqlite::memory:`;
 * - `postgres://…` or `postgresql://…` (libpq URL: user, password, host, port, database, `?sslmode=`);
 * - `kurrentdb://…`, `kurrent://…`, `esdb://…` (KurrentDB connection strings, e.g. `kurrentdb://host:2113?tls=false`).
 * @throws InvalidEvent naming the accepted forms.
 */
export function parseStoreUrl(given: string): StoreTarget {
  // URL schemes are case-insensitive (RFC 3986 §3.1): POSTGRES:// is postgres://.
  const url = given.replace(/^[A-Za-z][A-Za-z0-9+.-]*:/, (scheme) => scheme.toLowerCase());
  if (url.startsWith("sqlite:")) {
    const rest = url.slice("sqlite:".length);
    const path = rest.startsWith("//") ? rest.slice(2) : rest;
    if (path.length === 0)
      throw new InvalidEvent("event store URL sqlite: needs a path, e.g. sqlite:./events.sqlite");
    return { backend: "sqlite", path };
  }
  if (/^postgres(ql)?:\/\//.test(url)) return { backend: "postgres", url };
  if (/^(kurrentdb|kurrent|esdb|esdb\+discover):\/\//.test(url)) return { backend: "kurrentdb", url };
  throw new InvalidEvent(
    `event store URL ${redactUrl(url)} is not one of sqlite:<path>, postgres://user:password@host:5432/db, kurrentdb://host:2113`,
  );
}

/** How long {@link openEventStore} waits for a KurrentDB server to answer before refusing the URL, ms. */
export const KURRENT_OPEN_DEADLINE_MS = 5000;

/**
 * Opens the event store a URL selects (see {@link parseStoreUrl}).
 * @throws InvalidEvent for an unknown URL; StoreUnavailable when the server cannot be reached (KurrentDB:
 *   within {@link KURRENT_OPEN_DEADLINE_MS}); StoreSchemaMismatch when a PostgreSQL schema needs migrating.
 */
export async function openEventStore(url: string): Promise<EventStore> {
  const target = parseStoreUrl(url);
  switch (target.backend) {
    case "sqlite":
      if (target.path !== ":memory:") mkdirSync(dirname(resolve(target.path)), { recursive: true });
      return openSqliteEventStore(target.path);
    case "postgres":
      return openPostgresEventStore(target.url);
    case "kurrentdb":
      return openKurrentEventStore(target.url, { connectTimeoutMs: KURRENT_OPEN_DEADLINE_MS });
  }
}

/**
 * The event-store URL of a service: `EVENT_STORE_URL` when set, else the embedded store
 * `sqlite:<GATEHOUSE_DATA_DIR>/events.sqlite` (the data directory resolved against the working directory).
 * @returns undefined when neither is set (the caller names both variables).
 */
export function storeUrlFromEnv(env: {
  EVENT_STORE_URL?: string | undefined;
  GATEHOUSE_DATA_DIR?: string | undefined;
}): string | undefined {
  if (env.EVENT_STORE_URL) return env.EVENT_STORE_URL;
  if (env.GATEHOUSE_DATA_DIR) return `sqlite:${resolve(env.GATEHOUSE_DATA_DIR, "events.sqlite")}`;
  return undefined;
}

/**
 * Why `url` is not a store URL, for configuration checks (zod refinements name the variable).
 * @returns undefined when {@link parseStoreUrl} accepts it, else the message.
 */
export function storeUrlProblem(url: string): string | undefined {
  try {
    parseStoreUrl(url);
    return undefined;
  } catch (error) {
    return (error as Error).message;
  }
}

/** The `EVENT_STORE_URL` field of a service's zod environment schema: optional, refused naming the problem when not a store URL. */
export const EVENT_STORE_URL_ENV = z
  .string()
  .optional()
  .superRefine((url, ctx) => {
    const problem = url === undefined ? undefined : storeUrlProblem(url);
    if (problem) ctx.addIssue({ code: "custom", message: problem });
  });

/** Refinement for services without a default data dir: one of EVENT_STORE_URL and GATEHOUSE_DATA_DIR must be set. */
export function checkStoreEnv(
  e: { EVENT_STORE_URL?: string | undefined; GATEHOUSE_DATA_DIR?: string | undefined },
  ctx: z.RefinementCtx,
): void {
  if (!e.EVENT_STORE_URL && !e.GATEHOUSE_DATA_DIR)
    ctx.addIssue({
      code: "custom",
      path: ["EVENT_STORE_URL"],
      message:
        "set EVENT_STORE_URL (sqlite:<path> or postgres://…) or GATEHOUSE_DATA_DIR (the embedded store is <dir>/events.sqlite)",
    });
}
