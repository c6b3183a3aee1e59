import type pg from "pg";
import { StoreSchemaMismatch } from "./port.ts";
import { redactUrl } from "./url.ts";

/** The schema version this code reads and writes. */
export const POSTGRES_SCHEMA_VERSION = 1;

/** Migrations by target version; each runs in the migrate transaction. */
const MIGRATIONS: Record<number, string> = {
  1: `
CREATE TABLE gatehouse_events (
  global_position bigint PRIMARY KEY,
  stream_id text NOT NULL,
  revision bigint NOT NULL,
  event_id text NOT NULL,
  type text NOT NULL,
  data text NOT NULL,
  metadata text NOT NULL,
  UNIQUE (stream_id, revision),
  UNIQUE (stream_id, event_id)
);
CREATE INDEX gatehouse_events_stream_starts ON gatehouse_events (global_position) WHERE revision = 0;
-- One row: the last global position. Appends lock it, so positions commit in order and without gaps.
CREATE TABLE gatehouse_events_head (id int PRIMARY KEY CHECK (id = 1), position bigint NOT NULL);
INSERT INTO gatehouse_events_head VALUES (1, 0);
`,
};

/** The command that migrates a database, for messages. */
export function migrateCommand(url: string): string {
  return `gatehouse store migrate --url '${redactUrl(url)}'`;
}

/**
 * Brings a database's schema to {@link POSTGRES_SCHEMA_VERSION} (`gatehouse store migrate`). Safe to
 * run from several processes at once (an advisory lock serializes them) and again (it does nothing).
 * @returns the versions it applied (empty when current).
 * @throws StoreSchemaMismatch when the database is newer than this code.
 */
export async function migratePostgres(client: pg.ClientBase, url: string): Promise<number[]> {
  await client.query("BEGIN");
  try {
    await client.query("SELECT pg_advisory_xact_lock(hashtext('gatehouse_schema'))");
    await client.query("CREATE TABLE IF NOT EXISTS gatehouse_schema (version int NOT NULL)");
    const current = Number(
      (await client.query("SELECT max(version) AS v FROM gatehouse_schema")).rows[0]?.v ?? 0,
    );
    if (current > POSTGRES_SCHEMA_VERSION)
      throw new StoreSchemaMismatch(
        `the database at ${redactUrl(url)} has schema version ${current}, newer than this Gatehouse (${POSTGRES_SCHEMA_VERSION}): upgrade Gatehouse`,
      );
    const applied: number[] = [];
    for (let v = current + 1; v <= POSTGRES_SCHEMA_VERSION; v++) {
      await client.query(MIGRATIONS[v] as string);
      await client.query("INSERT INTO gatehouse_schema (version) VALUES ($1)", [v]);
      applied.push(v);
    }
    await client.query("COMMIT");
    return applied;
  } catch (error) {
    await client.query("ROLLBACK").catch(() => {});
    throw error;
  }
}

/**
 * The schema version a database holds: 0 when it has no Gatehouse schema yet.
 * @throws the driver's error when the query fails for another reason than a missing table.
 */
export async function postgresSchemaVersion(client: pg.ClientBase): Promise<number> {
  try {
    return Number((await client.query("SELECT max(version) AS v FROM gatehouse_schema")).rows[0]?.v ?? 0);
  } catch (error) {
    if ((error as { code?: string }).code === "42P01") return 0;
    throw error;
  }
}

/**
 * Checks that the database's schema is the one this code needs; services call it at start and never migrate.
 * @throws StoreSchemaMismatch naming the migrate command (schema missing or older) or an upgrade (newer).
 */
export async function checkPostgresSchema(client: pg.ClientBase, url: string): Promise<void> {
  const version = await postgresSchemaVersion(client);
  if (version === POSTGRES_SCHEMA_VERSION) return;
  if (version > POSTGRES_SCHEMA_VERSION)
    throw new StoreSchemaMismatch(
      `the database at ${redactUrl(url)} has schema version ${version}, newer than this Gatehouse (${POSTGRES_SCHEMA_VERSION}): upgrade Gatehouse`,
    );
  throw new StoreSchemaMismatch(
    version === 0
      ? `the database at ${redactUrl(url)} has no Gatehouse event-store schema: run ${migrateCommand(url)}`
      : `the database at ${redactUrl(url)} has schema version ${version}, older than this Gatehouse (${POSTGRES_SCHEMA_VERSION}): run ${migrateCommand(url)}`,
  );
}
